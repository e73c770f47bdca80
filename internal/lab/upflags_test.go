package lab

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/lab/impair"
)

func parseUpFlags(t *testing.T, args ...string) (*UpFlags, *pflag.FlagSet) {
	t.Helper()
	f, fs := NewUpFlags(), pflag.NewFlagSet("up", pflag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return f, fs
}

// The simple settings apply to both directions through Directions; the
// per-direction ones (duplication, burst loss, the queue) replace them
// with full configurations carrying the same settings.
func TestUpFlagsConfig(t *testing.T) {
	f, fs := parseUpFlags(t, "--rtt", "20ms", "--loss", "0.5%", "--rate", "1g")
	cfg, err := f.Config(fs)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RTT.Milliseconds() != 20 || cfg.Loss != 0.005 || cfg.Rate != 1e9 || cfg.MTU != 1500 || cfg.AtoB != nil {
		t.Errorf("config %+v", cfg)
	}
	f, fs = parseUpFlags(t, "--rtt", "20ms", "--rate", "1g", "--duplicate", "1%", "--burst-loss", "1%,30%", "--queue", "1M")
	if cfg, err = f.Config(fs); err != nil {
		t.Fatal(err)
	}
	if cfg.AtoB == nil || cfg.BtoA == nil {
		t.Fatalf("per-direction settings not built: %+v", cfg)
	}
	for name, d := range map[string]*impair.Config{"a→b": cfg.AtoB, "b→a": cfg.BtoA} {
		if d.Duplicate != 0.01 || d.GE == nil || d.GE.P != 0.01 || d.GE.R != 0.3 || d.QueueLimit != 1<<20 || d.Delay.Milliseconds() != 10 {
			t.Errorf("%s: %+v", name, *d)
		}
	}
	if cfg.AtoB.GE == cfg.BtoA.GE {
		t.Error("both directions share one burst-loss state")
	}
}

func TestUpFlagsRefuse(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mtu", "100"}, "--mtu 100"},
		{[]string{"--rtt", "3h"}, "--rtt"},
		{[]string{"--queue", "1M"}, "give --rate too"},
		{[]string{"--rate", "1g", "--queue", "3G"}, "--queue"},
		{[]string{"--senders", "99"}, "--senders 99"},
		{[]string{"--access-rate", "1g"}, "give --senders too"},
		{[]string{"--jitter", "1ms", "--reorder", "1%"}, ""},
	} {
		f, fs := parseUpFlags(t, c.args...)
		_, err := f.Config(fs)
		if c.want == "" {
			if err != nil {
				t.Errorf("%q: %v", c.args, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}

// The lab's rates read their suffix as iperf3 reads -b: a power of 1000
// whatever its case, so "--rate 1G" caps at 10^9 bit/s as "-b 1G" sends.
func TestUpFlagsRatesAreDecimal(t *testing.T) {
	for _, rate := range []string{"1G", "1g", "1000M", "1000m"} {
		f, _ := parseUpFlags(t, "--rate", rate, "--senders", "2", "--access-rate", rate)
		if f.Rate != 1e9 || f.AccessRate != 1e9 {
			t.Errorf("--rate %s --access-rate %s: %v and %v bit/s; want 1e9", rate, rate, f.Rate, f.AccessRate)
		}
	}
}

// The hosts' buffers are a visible choice: stock Linux unless --tcp-buffers
// big is given, and what the topology writes into every host follows it.
func TestUpFlagsTCPBuffers(t *testing.T) {
	for _, c := range []struct {
		args     []string
		want     TCPBuffers
		wantRmem string
	}{
		{nil, BuffersStock, "4096 131072 6291456"},
		{[]string{"--tcp-buffers", "stock"}, BuffersStock, "4096 131072 6291456"},
		{[]string{"--tcp-buffers", "big"}, BuffersBig, "4096 131072 134217728"},
		{[]string{"--tcp-buffers", "big", "--senders", "2"}, BuffersBig, "4096 131072 134217728"},
	} {
		f, fs := parseUpFlags(t, c.args...)
		cfg, err := f.Config(fs)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if cfg.TCPBuffers != c.want {
			t.Errorf("%q: buffers %q, want %q", c.args, cfg.TCPBuffers, c.want)
		}
		topo, _, err := cfg.topology(1500)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if got := topo.Sysctls["net.ipv4.tcp_rmem"]; got != c.wantRmem {
			t.Errorf("%q: the hosts get tcp_rmem %q, want %q", c.args, got, c.wantRmem)
		}
	}
	f, fs := parseUpFlags(t, "--tcp-buffers", "huge")
	if _, err := f.Config(fs); err == nil || !strings.Contains(err.Error(), "--tcp-buffers \"huge\"") {
		t.Errorf("--tcp-buffers huge: %v", err)
	}
	if got := BuffersStock.Text(); !strings.Contains(got, "stock") || !strings.Contains(got, "6291456") || !strings.Contains(got, "4194304") {
		t.Errorf("stock buffers read %q", got)
	}
	// A lab made before the choice had the big buffers.
	if got := TCPBuffers("").Text(); !strings.Contains(got, "134217728") {
		t.Errorf("a lab without the field reads %q", got)
	}
}
