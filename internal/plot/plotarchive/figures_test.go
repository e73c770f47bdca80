package plotarchive

import (
	"errors"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/plot"
)

// A campaign draws as a sweep or a heatmap over the axes asked for; axes
// it was not run over are an AxisError.
func TestCampaignFigure(t *testing.T) {
	for _, kind := range []string{"sweep", "heatmap"} {
		fig, err := CampaignFigure(kind, gridRuns(), "grid", "window", "parallel", "received_bits_per_second")
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if fig.Kind != kind || !strings.HasPrefix(fig.Footer.String(), "campaign grid") {
			t.Errorf("%s: drew a %s figure, footer %q", kind, fig.Kind, fig.Footer.String())
		}
		var ae *AxisError
		if _, err := CampaignFigure(kind, gridRuns(), "grid", "window", "congestion", "received_bits_per_second"); !errors.As(err, &ae) {
			t.Errorf("%s over an axis the campaign lacks: %v, want an AxisError", kind, err)
		}
	}
}

// A stored run draws from its document; a log keeps none, and another
// kind of run has another document: both are a DocumentError.
func TestRunFigure(t *testing.T) {
	rr := []byte(`{"kind":"rr","result":{"spec":{},"local":{"role":"client"},"remote":{"role":"server"}}}`)
	var de *plot.DocumentError
	_, err := RunFigure("timeline", &archive.Run{ID: "r1", DocumentFormat: archive.FormatJSON, Document: rr})
	if !errors.As(err, &de) || err.Error() != "run r1 is an rr -J run; plot timeline needs a client or server -J run" {
		t.Errorf("timeline of an rr run: %v", err)
	}
	_, err = RunFigure("timeline", &archive.Run{ID: "r2", DocumentFormat: "iperf2-text", Document: []byte("[  3] ...")})
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "run r2 was imported from a iperf2-text log") {
		t.Errorf("timeline of an imported log: %v", err)
	}
	_, err = RunFigure("timeline", &archive.Run{ID: "r3", DocumentFormat: archive.FormatJSON, Document: []byte("{")})
	if err == nil || errors.As(err, &de) || !strings.HasPrefix(err.Error(), "run r3: ") {
		t.Errorf("a broken document: %v; want an error naming the run, not about its kind", err)
	}
}
