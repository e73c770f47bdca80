package measure

import (
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/udpmon"
)

func mustLine(t *testing.T, s string) Test {
	t.Helper()
	tt, _, err := ParseLineText(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return tt
}

// TestDuration: how long each kind of test runs, from its flags.
func TestDuration(t *testing.T) {
	for _, c := range []struct {
		line string
		want time.Duration
		ok   bool
	}{
		{"client", spec.DefaultDuration, true},
		{"client -t 10 -O 2", 12 * time.Second, true}, // -O runs before the -t that is reported
		{"client -t 10s -O 2s -P 4 -R", 12 * time.Second, true},
		{"client -n 1G", 0, false}, // as fast as the path allows
		{"client -n 1G -b 100m", time.Duration(float64(1<<30) * 8 / 100e6 * float64(time.Second)), true},
		{"client -n 1G -b 100m -P 4", time.Duration(float64(1<<30) * 8 / 400e6 * float64(time.Second)), true},
		{"client -n 1G -t 5", 5 * time.Second, true}, // whichever ends first
		{"client -u -n 1448000 --pps 1000", time.Second, true},
		{"client -u -l 1000 -n 1000000 --spacing 20us", 20 * time.Millisecond, true},
		{"rr", spec.DefaultRRDuration, true},
		{"rr --sizes 64,512,1472 -t 3", 9 * time.Second, true},
		{"rr --count 1000 --interval 10ms --sizes 64,128", 20 * time.Second, true},
		{"rr --count 1000", 0, false},
		{"rr --load tcp,2", DefaultLoadIdle + DefaultLoadTime + DefaultLoadAfter, true},
		{"rr --load tcp,2 --load-time 8s", DefaultLoadIdle + 8*time.Second + DefaultLoadAfter, true},
		{"udpmon --sizes 64 --spacing 10us --count 1000", 10*time.Millisecond + UDPMonPointOverhead, true},
		{"udpmon --sizes 64,1472 --spacing 0,1ms --count 1000", 2*(2*time.Millisecond+time.Second) + 4*UDPMonPointOverhead, true},
		{"trace", 30 * time.Second, true}, // 30 hops of a second
		{"trace --max-hops 8 --probe-timeout 500ms --proto icmp", 4 * time.Second, true},
		{"trace --max-time 10s", 10 * time.Second, true},
		{"trace --max-time 2m", 30 * time.Second, true}, // no longer than every hop's timeout
	} {
		got, ok := mustLine(t, c.line).Duration()
		if got != c.want || ok != c.ok {
			t.Errorf("%q: %v %v, want %v %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

// TestUDPMonDefaultGrid: the default sweep is 23 sizes × 21 spacings of
// 10,000 datagrams; at its spacings (0 taken as 2 µs) that is about 97 s
// of sending, which a 10 s guess of its length cut short.
func TestUDPMonDefaultGrid(t *testing.T) {
	tt := mustLine(t, "udpmon")
	c := tt.UDPMon.Cfg
	if len(c.Sizes) != 23 || len(c.Spacings) != 21 || c.Count != udpmon.DefaultCount {
		t.Fatalf("grid %d × %d × %d", len(c.Sizes), len(c.Spacings), c.Count)
	}
	var gaps time.Duration
	for _, g := range c.Spacings {
		gaps += max(g, udpmonFastestGap)
	}
	sending := time.Duration(len(c.Sizes)) * time.Duration(c.Count) * gaps
	if sending < 96*time.Second || sending > 98*time.Second {
		t.Fatalf("sending %v, want about 97 s", sending)
	}
	got, ok := tt.Duration()
	if want := sending + 23*21*UDPMonPointOverhead; !ok || got != want {
		t.Fatalf("%v %v, want %v", got, ok, want)
	}
}

// TestDirection: -R and --bidir, as the line reads them.
func TestDirection(t *testing.T) {
	for line, want := range map[string]Direction{
		"client": Forward, "client -R": Reverse, "client -uR": Reverse, "client --reverse=false": Forward,
		"client --bidir": Bidir, "udpmon -R": Reverse, "rr --load tcp,2,down": Forward,
	} {
		if got := mustLine(t, line).Direction(); got != want {
			t.Errorf("%q: %s, want %s", line, got, want)
		}
	}
}

// TestResources: what a test holds on the server, as its limits count.
func TestResources(t *testing.T) {
	for line, want := range map[string]Resources{
		"client":                      {1, 1 << 20},
		"client -P 4 --bidir -l 128K": {8, 8 * 128 << 10},
		"client -u -P 2":              {2, 2 * spec.DefaultUDPLength},
		"udpmon --sizes 64,1472":      {1, 1472},
	} {
		if got := mustLine(t, line).Resources(); got != want {
			t.Errorf("%q: %+v, want %+v", line, got, want)
		}
	}
}

// TestRefuses: what the commands refused, the model refuses, with the
// same one-line messages.
func TestRefuses(t *testing.T) {
	for line, want := range map[string]string{
		"client -l 0":                    "-l 0: want 1 byte to 16777216 bytes",
		"client --pps 10":                "--pps applies to UDP tests (-u)",
		"client -b 1g/32":                "-b 1g/32: a burst applies to UDP only",
		"client --tcpinfo-interval 10us": "--tcpinfo-interval 10µs: want 0 (off) or at least 1ms",
		"client --bottleneck x":          "--bottleneck x: want a rate such as 1g or 622m",
		"client --nosuch":                "nosuch",
		"rr --udp --tcp":                 "--udp, --tcp and --crr: choose one",
		"rr --load-time 5s":              "--load-time applies with --load",
		"rr --load tcp":                  "--load tcp: wrong number of fields",
		"rr --load udp,2":                "a UDP load needs a rate",
		"rr --sizes 64,128 --load tcp,1": "--load: give one --sizes value for the probes",
		"udpmon --count 0":               "--count 0: want at least 1",
		"udpmon --sizes x":               "--sizes x:",
	} {
		_, _, err := ParseLineText(line)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", line, err, want)
		}
	}
	// Flags of the command line only (a line may not carry them), read
	// as the command reads them.
	for args, want := range map[string]string{
		"client -J --json-stream": "--json and --json-stream: choose one",
		"client -p 0":             "-p 0: want 1 to 65535",
		"udpmon --csv -J":         "--csv and --json: choose one",
	} {
		w := strings.Fields(args)
		if _, _, err := Parse(Kind(w[0]), w[1:]); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", args, err, want)
		}
	}
	// The command line's flags that a scheduled line may not carry.
	for _, line := range []string{"client --logfile /etc/passwd", "client --tcpinfo-csv x", "iperf -c x", "client host"} {
		if _, _, err := ParseLineText(line); err == nil {
			t.Errorf("%q accepted as a test line", line)
		}
	}
	if _, _, err := Parse(KindClient, []string{"host"}); err == nil || !strings.Contains(err.Error(), "unexpected arguments") {
		t.Errorf("a destination among a test's flags: %v", err)
	}
}

// TestParseLikeTheCommand: a line's canonical words read back to the
// same test.
func TestParseLikeTheCommand(t *testing.T) {
	a := mustLine(t, "client -t 10 -O 2 -P 4 -w 4M -C cubic -uR -b 100m/8")
	if s := a.Client.Spec; s.Duration != 12*time.Second || s.Omit != 2*time.Second || s.Streams != 4 || s.Window != 4<<20 ||
		s.Congestion != "cubic" || s.Protocol != spec.UDP || !s.Reverse || s.Rate != 100e6 || s.Burst != 8 || s.Length != spec.DefaultUDPLength {
		t.Fatalf("%+v", s)
	}
}

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{"client -t 10 -O 2", "rr --sizes 64:1472:64 --count 5", "udpmon --spacing 0:40us:1us", "client -n 1G -b 1m", "rr --load udp,2,down,300m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tt, _, err := ParseLineText(s)
		if err != nil {
			return
		}
		if d, ok := tt.Duration(); ok && d < 0 {
			t.Fatalf("%q: negative duration %v", s, d)
		}
		_ = tt.Direction()
	})
}
