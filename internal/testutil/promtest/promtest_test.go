package promtest

import (
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func TestScrapeReadsWhatTheRegistryServes(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "x_bits", Help: "h"}, []string{"src"})
	reg.MustRegister(g)
	g.WithLabelValues("a").Set(42)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	fams := Scrape(t, mux)
	m := fams["x_bits"].GetMetric()
	if len(m) != 1 || Label(m[0], "src") != "a" || Label(m[0], "dst") != "" || m[0].GetGauge().GetValue() != 42 {
		t.Fatalf("scraped %v", fams)
	}
}
