package measure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func parseClient(t *testing.T, args ...string) *Client {
	t.Helper()
	tt, _, err := Parse(KindClient, args)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return tt.Client
}

// Each iperf3 flag, given as iperf3's users write it, lands where the
// test reads it.
func TestIperf3FlagsParsed(t *testing.T) {
	c := parseClient(t, "-4", "-k", "100", "-l", "1000", "-S", "0x10", "-A", "1,2", "-X", "lo", "--fq-rate", "50m")
	switch {
	case !c.IPv4 || c.Family() != "4":
		t.Errorf("-4: IPv4 %v, family %q", c.IPv4, c.Family())
	case c.Spec.Blocks != 100 || c.Spec.Bytes != 100*1000 || c.Spec.Duration != 0:
		t.Errorf("-k 100 -l 1000: blocks %d, bytes %d, duration %v; want 100 blocks, 100000 bytes, no time limit",
			c.Spec.Blocks, c.Spec.Bytes, c.Spec.Duration)
	case c.Spec.TOS != 0x10:
		t.Errorf("-S 0x10: TOS %#x", c.Spec.TOS)
	case c.ClientCPU != 1 || c.ServerCPU != 2:
		t.Errorf("-A 1,2: CPUs %d,%d", c.ClientCPU, c.ServerCPU)
	case c.BindDevice != "lo":
		t.Errorf("-X lo: %q", c.BindDevice)
	case c.Spec.FQRate <= 0:
		t.Errorf("--fq-rate 50m: %v", c.Spec.FQRate)
	}
	c = parseClient(t, "-6", "-u", "--dont-fragment", "-A", "3", "-R", "--rcv-timeout", "1500", "--cntl-ka=60/5/3")
	switch {
	case c.Family() != "6":
		t.Errorf("-6: family %q", c.Family())
	case !c.Spec.DontFragment:
		t.Error("--dont-fragment not in the spec")
	case c.ClientCPU != 3 || c.ServerCPU != NoCPU:
		t.Errorf("-A 3: CPUs %d,%d; want 3 and none", c.ClientCPU, c.ServerCPU)
	case c.RcvTimeout != 1500*time.Millisecond:
		t.Errorf("--rcv-timeout 1500: %v", c.RcvTimeout)
	case c.ControlKeepAlive != (KeepAlive{On: true, Idle: 60 * time.Second, Interval: 5 * time.Second, Count: 3}):
		t.Errorf("--cntl-ka=60/5/3: %+v", c.ControlKeepAlive)
	}
	c = parseClient(t, "-L", "0x1234", "--cntl-ka", "-F", "data.bin")
	switch {
	case c.Spec.FlowLabel != 0x1234:
		t.Errorf("-L 0x1234: %#x", c.Spec.FlowLabel)
	case c.ControlKeepAlive != (KeepAlive{On: true}):
		t.Errorf("--cntl-ka alone: %+v, want on with the defaults", c.ControlKeepAlive)
	case c.File != "data.bin":
		t.Errorf("-F: %q", c.File)
	case c.RcvTimeout != DefaultRcvTimeout || c.ClientCPU != NoCPU:
		t.Errorf("defaults: --rcv-timeout %v, -A %d", c.RcvTimeout, c.ClientCPU)
	}
}

// -k ends the test as -n does, so the duration model reads it as bytes.
func TestBlockCountDuration(t *testing.T) {
	tt := mustLine(t, "client -k 1000 -l 1000 -b 8m")
	d, ok := tt.Duration()
	if !ok || d != time.Second {
		t.Fatalf("-k 1000 -l 1000 -b 8m: %v, %v; want 1s (8 Mbit at 8 Mbit/s)", d, ok)
	}
	tt = mustLine(t, "client -u -k 1000 --pps 500")
	if d, ok := tt.Duration(); !ok || d != 2*time.Second {
		t.Fatalf("-u -k 1000 --pps 500: %v, %v; want 2s", d, ok)
	}
}

// Bad values are refused with one line naming the flag, as iperf3
// refuses them.
func TestIperf3FlagsRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-4", "-6"}, "-4 and -6: choose one"},
		{[]string{"-k", "10", "-t", "5"}, "only one test end condition (-t, -n, -k)"},
		{[]string{"-k", "10", "-n", "1M"}, "only one test end condition (-t, -n, -k)"},
		{[]string{"-k", "lots"}, "invalid argument"},
		{[]string{"-A", "x"}, "-A x: want n or n,m"},
		{[]string{"-A", "1025"}, "-A 1025: want n or n,m"},
		{[]string{"-A", "1,-1"}, "-A 1,-1: want n or n,m"},
		{[]string{"--dont-fragment"}, "--dont-fragment applies to UDP tests (-u)"},
		{[]string{"-L", "0"}, "-L 0: want a flow label from 1 to 0xfffff"},
		{[]string{"-L", "0x100000"}, "-L 0x100000: want a flow label"},
		{[]string{"-L", "5", "-4"}, "-L: a flow label is IPv6's"},
		{[]string{"-L", "5", "-u"}, "-L: iperf3 labels TCP data connections only"},
		{[]string{"--rcv-timeout", "5000"}, "--rcv-timeout: the client receives only with -R or --bidir"},
		{[]string{"-R", "--rcv-timeout", "50"}, "--rcv-timeout 50: want 100 to 86400000 ms"},
		{[]string{"--cntl-ka=5/10/3"}, "the idle time must be longer than KEEPINTV x KEEPCNT"},
		{[]string{"--cntl-ka=a/b"}, "want KEEPIDLE/KEEPINTV/KEEPCNT"},
		{[]string{"--cntl-ka=1/2/3/4"}, "want KEEPIDLE/KEEPINTV/KEEPCNT"},
		{[]string{"--fq-rate", "fast"}, "--fq-rate"},
	} {
		_, _, err := Parse(KindClient, c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: err = %v, want one line with %q", c.args, err, c.want)
		}
	}
}

// -F: a sender without -t, -n or -k sends the file once, as iperf3;
// what -F cannot go with is refused.
func TestFileFlag(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, make([]byte, 12345), 0o600); err != nil {
		t.Fatal(err)
	}
	c := parseClient(t, "-F", name)
	if c.Spec.Bytes != 12345 || c.Spec.Duration != 0 {
		t.Errorf("-F of 12345 bytes: -n %d, -t %v; want the file's size and no time limit", c.Spec.Bytes, c.Spec.Duration)
	}
	if c = parseClient(t, "-F", name, "-t", "3"); c.Spec.Bytes != 0 || c.Spec.Duration != 3*time.Second {
		t.Errorf("-F with -t 3: -n %d, -t %v", c.Spec.Bytes, c.Spec.Duration)
	}
	if c = parseClient(t, "-F", name, "-R"); c.Spec.Bytes != 0 {
		t.Errorf("-F with -R: -n %d; a receiver's file sets no size", c.Spec.Bytes)
	}
	for _, bad := range [][]string{{"-u"}, {"-P", "2"}, {"--bidir"}, {"-Z"}, {"--trip-times"}} {
		if _, _, err := Parse(KindClient, append([]string{"-F", name}, bad...)); err == nil || !strings.HasPrefix(err.Error(), "-F") {
			t.Errorf("-F %v: err = %v, want a refusal naming -F", bad, err)
		}
	}
}

// --snd-timeout is iperf3's: milliseconds of unacknowledged TCP data on
// the client's sockets, into the spec; a UDP test or a value out of
// range is refused.
func TestSndTimeout(t *testing.T) {
	if c := parseClient(t, "--snd-timeout", "2500"); c.Spec.SndTimeout != 2500*time.Millisecond {
		t.Errorf("--snd-timeout 2500: %v", c.Spec.SndTimeout)
	}
	if c := parseClient(t); c.Spec.SndTimeout != 0 {
		t.Errorf("default: %v, want the kernel's (0)", c.Spec.SndTimeout)
	}
	for args, want := range map[string]string{
		"-u --snd-timeout 100":   "applies to TCP",
		"--snd-timeout -1":       "want 0 to 86400000 ms",
		"--snd-timeout 86400001": "want 0 to 86400000 ms",
	} {
		if _, _, err := Parse(KindClient, strings.Fields(args)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}

// --trip-times puts its field in the spec; what it cannot go with is
// refused in one line.
func TestTripTimesFlag(t *testing.T) {
	if c := parseClient(t, "--trip-times", "-R"); !c.Spec.TripTimes {
		t.Error("--trip-times is not in the spec")
	}
	if c := parseClient(t); c.Spec.TripTimes {
		t.Error("trip times without --trip-times")
	}
	for args, want := range map[string]string{
		"-u --trip-times":   "--trip-times applies to TCP",
		"-Z --trip-times":   "--trip-times and -Z",
		"-l 8 --trip-times": "-l 8: --trip-times stamps each block with a 16-byte header",
	} {
		if _, _, err := Parse(KindClient, strings.Fields(args)); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want one line with %q", args, err, want)
		}
	}
}
