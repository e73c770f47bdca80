package reportarchive

import (
	"errors"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/flagvalue"
)

// Flags are wireperf report's flags, --db aside: what to report (one of
// Campaign, Run and Since) and the directory to write the page into.
type Flags struct {
	Campaign string
	Run      string
	Since    time.Duration
	Output   string
}

// Register adds the flags to fs.
func (f *Flags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.Campaign, "campaign", "", "the campaign to report")
	fs.StringVar(&f.Run, "run", "", "the run to report")
	fs.Var(flagvalue.Duration(&f.Since), "since", "every campaign with runs started this long ago or less, e.g. 24h")
	fs.StringVarP(&f.Output, "output", "o", "", "the directory to write index.html and its figures into (required)")
}

// Check says whether the flags name exactly one thing to report and a
// directory to write into. An error is the flags'.
func (f *Flags) Check() error {
	given := 0
	for _, set := range []bool{f.Campaign != "", f.Run != "", f.Since > 0} {
		if set {
			given++
		}
	}
	if given != 1 {
		return errors.New("report needs exactly one of --campaign NAME, --run ID or --since DURATION")
	}
	if f.Output == "" {
		return errors.New("report needs -o DIR")
	}
	return nil
}
