// Package promtest reads a handler's pages in tests: a GET that must
// answer 200, a /metrics page parsed by Prometheus's own text parser, and
// a real Prometheus server (Debian's package) scraping it, so that a test
// checks what a Prometheus server would read.
package promtest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Get fetches path from h and returns the body; anything but 200 fails
// the test.
func Get(t testing.TB, h http.Handler, path string) []byte {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d: %s", path, resp.StatusCode, body)
	}
	return body
}

// Scrape fetches h's /metrics and parses it as Prometheus does.
func Scrape(t testing.TB, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	body := Get(t, h, "/metrics")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("the text parser refuses /metrics: %v\n%s", err, body)
	}
	return fams
}

// Label is the value of m's label name; "" if it has none.
func Label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
