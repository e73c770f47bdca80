package emit

import (
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

// An rr test run through a lab whose router fell behind says so, in text
// and JSON.
func TestRRReportCarriesTheLabsWarning(t *testing.T) {
	const w = `the lab "wan"'s router fell behind`
	r := &result.Result{Local: result.End{RR: &result.RR{}}, Warnings: []string{w}}
	var text, js strings.Builder
	if err := (&RRText{W: &text}).Write(r); err != nil {
		t.Fatal(err)
	}
	if err := (&RRJSON{W: &js}).Write(r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "WARNING: "+w) {
		t.Errorf("text lacks the warning:\n%s", text.String())
	}
	if !strings.Contains(js.String(), `"warnings"`) {
		t.Errorf("JSON lacks the warning:\n%s", js.String())
	}
}

// A network RTT figure a host delayed carries the host's name beside it,
// in text and JSON.
func TestRRReportNamesTheHostInANetworkRTT(t *testing.T) {
	without := 19_900.0
	p := result.RRPoint{Label: "loaded", RequestSize: 64, ResponseSize: 64, Sent: 205, Completed: 205, Seconds: 10,
		RTT:        result.Percentiles{Count: 205, P50: 19_500, P99: 60_000, Max: 70_000},
		NetworkRTT: result.Percentiles{Count: 205, P50: 19_500, P99: 38_000, Max: 41_812},
		HostFlags: []result.RRHostFlag{
			{Figure: "max", Host: result.RoleClient, NetworkRTTUs: 41_812, WithoutUs: &without, Transactions: 4, ShareUs: 22_800, HostDelayedUs: 1000},
			{Figure: "p99", Host: result.RoleServer, NetworkRTTUs: 38_000, WithoutUs: &without, Transactions: 1, ShareUs: 30_000, HostDelayedUs: 1000},
		}}
	r := &result.Result{Local: result.End{RR: &result.RR{Points: []result.RRPoint{p}}}}
	var text, js strings.Builder
	if err := (&RRText{W: &text}).Write(r); err != nil {
		t.Fatal(err)
	}
	if err := (&RRJSON{W: &js}).Write(r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"HOST DELAY: network RTT max 41.812 ms is a transaction the client host delayed by 22.800 ms",
		"without host-delayed transactions max 19.900 ms",
		"HOST DELAY: network RTT p99 38.000 ms holds 1 transaction the server host delayed, by up to 30.000 ms (T3 − T2",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if !strings.Contains(js.String(), `"host_flags"`) || !strings.Contains(js.String(), `"without_host_delayed_us": 19900`) {
		t.Errorf("JSON lacks the flags:\n%s", js.String())
	}
}
