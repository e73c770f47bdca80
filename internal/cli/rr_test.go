package cli

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func TestRRUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rr"}, "HOST"},
		{[]string{"rr", "h", "--udp", "--tcp"}, "choose one"},
		{[]string{"rr", "h", "--sizes", "10"}, "--sizes"},
		{[]string{"rr", "h", "--sizes", "64:32:8"}, "--sizes"},
		{[]string{"rr", "h", "--sizes", "64,512", "--load", "tcp,4"}, "one --sizes"},
		{[]string{"rr", "h", "--load", "udp,4"}, "needs a rate"},
		{[]string{"rr", "h", "--load", "sctp,4"}, "tcp or udp"},
		{[]string{"rr", "h", "--load", "udp,1,down,fast"}, "rate such as"},
		{[]string{"rr", "h", "--load", "udp,1,300m,down"}, "direction"},
		{[]string{"rr", "h", "--load", "tcp,1,up,1g,x"}, "fields"},
		{[]string{"rr", "h", "--load", "tcp,x"}, "streams"},
		{[]string{"rr", "h", "--load", "tcp,4,sideways"}, "direction"},
		{[]string{"rr", "h", "--load-time", "5s"}, "--load"},
		{[]string{"rr", "h", "--interval", "20s"}, "--interval"},
		{[]string{"rr", "h", "--response-size", "9"}, "--response-size"},
	} {
		code, _, stderr := runCLI(tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: exit %d, stderr %q; want %d and one line mentioning %q", tc.args, code, stderr, ExitUsage, tc.want)
		}
	}
}

func TestRRTextAndJSON(t *testing.T) {
	port := strconv.Itoa(startServer(t))
	code, out, stderr := runCLI("rr", "127.0.0.1", "-p", port, "--sizes", "64,1472", "--count", "200", "--response-size", "1K")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"[64 → 1024 bytes] 200 transactions", "[1472 → 1024 bytes] 200 transactions", "network RTT", "server time", "forward OWD", "Clock offset", "CPU: client"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	code, out, stderr = runCLI("rr", "127.0.0.1", "-p", port, "--tcp", "--count", "100", "-J")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Kind   string
		Result struct {
			Local struct {
				RR struct {
					Mode   string
					Points []struct {
						Completed    int64
						RTT          struct{ P50 float64 } `json:"rtt_us"`
						RTTHistogram struct {
							Count   int64
							Buckets []struct{ From, To float64 }
						} `json:"rtt_histogram"`
					}
				}
			}
			Remote struct{ RR struct{ Served int64 } }
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	rr := doc.Result.Local.RR
	if doc.Kind != "rr" || rr.Mode != "tcp" || len(rr.Points) != 1 || rr.Points[0].Completed != 100 ||
		rr.Points[0].RTTHistogram.Count != 100 || len(rr.Points[0].RTTHistogram.Buckets) == 0 || doc.Result.Remote.RR.Served < 100 {
		t.Errorf("JSON report: %+v", doc)
	}
}

func TestRRLoadOnLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("latency under load for 2 s")
	}
	port := strconv.Itoa(startServer(t))
	for _, tc := range []struct {
		load string
		want []string
	}{
		{"tcp,2,down", []string{"during a TCP load of 2 streams (server → client)", "server → client"}},
		{"udp,1,up,200m", []string{"during a UDP load of 1 stream (client → server)", "client → server (", "of datagrams lost)"}},
	} {
		t.Run(tc.load, func(t *testing.T) {
			code, out, stderr := runCLI("rr", "127.0.0.1", "-p", port, "--load", tc.load, "--load-idle", "500ms", "--load-time", "1s", "--load-after", "300ms")
			if code != ExitOK {
				t.Fatalf("exit %d: %s\n%s", code, stderr, out)
			}
			for _, want := range append([]string{"[idle, 64 → 64 bytes]", "[loaded, 64 → 64 bytes]", "[after, 64 → 64 bytes]", "RTT increase under load"}, tc.want...) {
				if !strings.Contains(out, want) {
					t.Errorf("report lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
