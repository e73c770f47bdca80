package reportarchive

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/report"
)

// Selection is what a report shows: one campaign, one run, or every
// campaign with runs started within Since of Now. The command checks
// that the campaign or the run is there.
type Selection struct {
	Campaign string
	Run      *archive.Run
	Since    time.Duration
	Now      time.Time // when the page is made; Since counts back from it
}

// Write writes the report page of sel into dir, index.html and its
// figures beside it, and returns the page's path. version names the
// build that made it.
func Write(ctx context.Context, store *archive.Store, sel Selection, dir, version string) (string, error) {
	p := report.Page{Generated: sel.Now, Version: version}
	var names []string
	switch {
	case sel.Campaign != "":
		names = []string{sel.Campaign}
		p.Title = "wireperf report: campaign " + sel.Campaign
	case sel.Run != nil:
		p.Title = "wireperf report: run " + sel.Run.ID
		// The run's figures go into dir as its section is made.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		p.Sections = []report.Section{Run(sel.Run, dir)}
	default:
		var err error
		if names, err = CampaignsSince(ctx, store, sel.Now.Add(-sel.Since)); err != nil {
			return "", err
		}
		p.Title = fmt.Sprintf("wireperf report: campaigns of the last %s", sel.Since)
		if len(names) == 0 {
			p.Empty = fmt.Sprintf("No campaign has runs started in the last %s.", sel.Since)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, name := range names {
		s, err := Campaign(ctx, store, name, dir)
		if err != nil {
			return "", err
		}
		p.Sections = append(p.Sections, s)
	}
	var buf bytes.Buffer
	if err := report.Render(&buf, p); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "index.html")
	return out, os.WriteFile(out, buf.Bytes(), 0o644)
}
