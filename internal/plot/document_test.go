package plot

import (
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/resultjson"
	"github.com/wireperf/wireperf/internal/udpmon"
)

// Each kind of one run's figure is drawn from the document that has it,
// with the subject in its footer; an unknown kind is an error.
func TestDocumentFigure(t *testing.T) {
	sweep := &udpmon.Sweep{Server: "beta", Points: []udpmon.Point{{Size: 512, Spacing: 20 * time.Microsecond, RecvWireBps: 2e8, Sent: 1000}}}
	docs := map[string]*resultjson.Document{
		"timeline": {Kind: resultjson.KindTest, Result: tcpRun()},
		"latency":  {Kind: resultjson.KindRR, Result: rrRun()},
		"load":     {Kind: resultjson.KindRR, Result: rrRun()},
		"udpmon":   {Kind: resultjson.KindUDPMon, Sweep: sweep},
	}
	for kind, doc := range docs {
		f, err := DocumentFigure(kind, doc, "run abc")
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if f.Kind != kind || !strings.HasPrefix(f.Footer.String(), "run abc") {
			t.Errorf("%s: drew a %s figure, footer %q", kind, f.Kind, f.Footer.String())
		}
	}
	if _, err := DocumentFigure("latency", docs["timeline"], ""); err == nil {
		t.Error("a bulk run's document gave a latency figure")
	}
	if _, err := DocumentFigure("sweep", docs["timeline"], ""); err == nil || !strings.Contains(err.Error(), "sweep") {
		t.Errorf("an unknown kind: %v", err)
	}
}
