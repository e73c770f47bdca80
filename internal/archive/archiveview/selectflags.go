package archiveview

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/flagvalue"
)

// SelectFlags pick runs from the archive: the flags of wireperf runs
// and wireperf table, --db aside.
type SelectFlags struct {
	Campaign string
	Since    time.Duration // runs started this long ago or less; 0: any
	Host     string
	Where    []string // KEY=VALUE, as Where reads them
}

// Register adds the flags to fs.
func (s *SelectFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&s.Campaign, "campaign", "", "only this campaign's runs")
	fs.Var(flagvalue.Duration(&s.Since), "since", "only runs started this long ago or less, e.g. 24h")
	fs.StringVar(&s.Host, "host", "", "only runs whose local or remote host name contains this")
	fs.StringArrayVar(&s.Where, "where", nil, "only runs where KEY=VALUE: source, state, or an axis (window=1M); repeatable")
}

// Selection is the runs the flags pick, --since counting back from now.
// An error is the flags'.
func (s *SelectFlags) Selection(now time.Time) (Selection, error) {
	f := archive.Filter{Campaign: s.Campaign, Host: s.Host}
	if s.Since > 0 {
		f.Since = now.Add(-s.Since)
	}
	return Where(f, s.Where)
}
