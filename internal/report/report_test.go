package report

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/palette"
)

func render(t *testing.T, p Page) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// chartData reads the charts' JSON back out of the page.
func chartData(t *testing.T, page string) []chartJSON {
	t.Helper()
	m := regexp.MustCompile(`var charts = (\[.*\]);`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the page has no chart data")
	}
	var out []chartJSON
	if err := json.Unmarshal([]byte(m[1]), &out); err != nil {
		t.Fatalf("chart data: %v\n%s", err, m[1])
	}
	return out
}

func TestEmptyPageSaysSo(t *testing.T) {
	page := render(t, Page{Title: "t", Empty: "No campaign has runs started in the last 24h0m0s."})
	if !strings.Contains(page, "No campaign has runs") || strings.Contains(page, `class="chart"`) {
		t.Error("the empty page does not say so, or has a chart")
	}
	if got := chartData(t, page); len(got) != 0 {
		t.Errorf("charts %v on an empty page", got)
	}
}

func TestPageInlinesEverything(t *testing.T) {
	p := Page{Title: "campaign x", Generated: time.Unix(0, 0), Sections: []Section{{
		Name:    "campaign x",
		Spec:    "window: [64K, 1M]\n</pre><script>alert(1)</script>",
		Table:   &Table{Caption: "c", Grid: [][]string{{"window", "1"}, {"64K", "1.00 Gbits/sec (n=1)"}}},
		Figures: []Figure{{File: "x-sweep.svg", Alt: "sweep"}},
		Charts: []Chart{{Title: "sweep", LogX: true, X: []float64{0, 65536, 1 << 20},
			Series: []Series{{Name: "parallel 1", Y: []float64{5, 1, math.NaN()}}}}},
	}}}
	page := render(t, p)
	if regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:|//)`).MatchString(page) {
		t.Error("the page refers to another host")
	}
	if strings.Contains(page, "<script>alert(1)") {
		t.Error("the spec is not escaped")
	}
	for _, want := range []string{"uPlot", `<img src="x-sweep.svg"`, "<td>1.00 Gbits/sec (n=1)</td>", "MIT License"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	charts := chartData(t, page)
	if len(charts) != 1 {
		t.Fatalf("%d charts, want 1", len(charts))
	}
	c := charts[0]
	// x = 0 cannot sit on a log axis: it and its y are left out; NaN is a gap.
	if len(c.Data) != 2 || len(c.Data[0]) != 2 || *c.Data[0][0] != 65536 || *c.Data[1][0] != 1 || c.Data[1][1] != nil {
		t.Errorf("chart data %s", mustJSON(c.Data))
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The interactive charts draw series i in palette.Series[i], the colour
// the static figures give it.
func TestPageUsesSharedSeriesColours(t *testing.T) {
	page := render(t, Page{Title: "t"})
	m := regexp.MustCompile(`var colours = (\[[^\]]*\]);`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the page has no series colours")
	}
	var got []string
	if err := json.Unmarshal([]byte(m[1]), &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, palette.Series) {
		t.Errorf("the page's colours %v, want palette.Series %v", got, palette.Series)
	}
}

// A run's host charts are drawn after its goodput chart, each with a
// place on the page and its data.
func TestRunHostCharts(t *testing.T) {
	page := render(t, Page{Title: "t", Sections: []Section{{Name: "run r1", Runs: []Run{{ID: "r1",
		Chart:      &Chart{Title: "goodput", X: []float64{1, 2}, Series: []Series{{Name: "client sends", Y: []float64{1, 2}}}},
		HostCharts: []Chart{{Title: "host CPU", X: []float64{1, 2}, Series: []Series{{Name: "local host", Y: []float64{30, 40}}}}},
	}}}}})
	charts := chartData(t, page)
	if len(charts) != 2 || charts[0].Title != "goodput" || charts[1].Title != "host CPU" {
		t.Fatalf("charts %s, want the goodput's then the host's", mustJSON(charts))
	}
	if !strings.Contains(page, `id="`+charts[1].ID+`"`) {
		t.Errorf("the page has no place for the host chart %s", charts[1].ID)
	}
}
