package mcastrun

import (
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/isoch"

	"github.com/wireperf/wireperf/internal/measure"
)

// client is a client test parsed from args, as the command line does.
func client(t *testing.T, args ...string) *measure.Client {
	t.Helper()
	fs := measure.NewFlagSet("client")
	c := measure.NewClient()
	c.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := c.Finish(fs); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClientTTL(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		ttl   int
		title string
	}{
		{[]string{"-u"}, DefaultTTL, ""},
		{[]string{"-u", "-T", "32"}, 32, ""},              // iperf 2's -T before a group
		{[]string{"-u", "--ttl", "7"}, 7, ""},             // the long form
		{[]string{"-u", "--ttl", "7", "-T", "9"}, 7, "9"}, // both: --ttl rules, -T stays a title
		{[]string{"-u", "-T", "lab"}, DefaultTTL, "lab"},  // a word is iperf3's title
	} {
		ttl, title, err := ClientTTL(client(t, tc.args...))
		if err != nil || ttl != tc.ttl || title != tc.title {
			t.Errorf("%v: TTL %d title %q (%v), want %d %q", tc.args, ttl, title, err, tc.ttl, tc.title)
		}
	}
	if _, _, err := ClientTTL(client(t, "-u", "-T", "300")); err == nil {
		t.Error("-T 300 before a group: no error")
	}
}

func TestClientGroupRefuses(t *testing.T) {
	for _, tc := range []struct {
		host string
		args []string
		want string
	}{
		{"239.1.1.1", nil, "add -u"},
		{"239.1.1.1", []string{"-u", "-R"}, "sends nothing back"},
		{"239.1.1.1", []string{"-u", "-P", "2"}, "one sender"},
		{"239.1.1.1", []string{"-u", "--iperf3"}, "iperf3"},
		{"239.1.1.1", []string{"-u", "-6"}, "other family"},
		{"239.1.1.1%eth0", []string{"-u", "-X", "eth1"}, "two interfaces"},
		{"ff3e::1", []string{"-u", "-B", "10.0.0.1"}, "family"},
		{"239.1.1.1", []string{"-u", "-J", "--json-stream"}, "choose one"},
	} {
		var err error
		fs := measure.NewFlagSet("client")
		c := measure.NewClient()
		c.Register(fs)
		if err = fs.Parse(tc.args); err == nil {
			if err = c.Finish(fs); err == nil {
				_, _, err = clientGroup(c, tc.host)
			}
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: %v, want an error saying %q", tc.host, tc.args, err, tc.want)
		}
	}
	g, opt, err := clientGroup(client(t, "-u", "-T", "4", "-p", "5001"), "ff3e::1%v0")
	if err != nil || g.Interface != "v0" || opt.TTL != 4 || g.Addr.String() != "[ff3e::1]:5001" {
		t.Errorf("ff3e::1%%v0 -T 4: %+v %+v %v", g, opt, err)
	}
}

func TestServerCheck(t *testing.T) {
	for _, tc := range []struct {
		s    Server
		want string
	}{
		{Server{Group: "10.0.0.1", Port: 5001}, "not a multicast group"},
		{Server{Group: "239.1.1.1", Port: 0}, "port"},
		{Server{Group: "239.1.1.1", Port: 5001, Source: "ff3e::1"}, "source"},
		{Server{Group: "239.1.1.1", Port: 5001, Source: "fd00::1"}, "family"},
		{Server{Group: "232.1.1.1", Port: 5001, Source: "nonsense"}, "not an IP address"},
	} {
		if err := tc.s.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error saying %q", tc.s, err, tc.want)
		}
	}
	if err := (Server{Group: "232.1.1.1%eth0", Port: 5001, Source: "10.0.0.1"}).Check(); err != nil {
		t.Errorf("an SSM receiver on eth0: %v", err)
	}
}

func TestParseIsochronous(t *testing.T) {
	f, err := isoch.Parse("60:20m,0")
	if err != nil || f.FPS != 60 || f.Mean != 20e6 || f.Stdev != 0 {
		t.Errorf("60:20m,0: %+v %v", f, err)
	}
	if f, err = isoch.Parse("29.97:8m,2m"); err != nil || f.FPS != 29.97 || f.Stdev != 2e6 {
		t.Errorf("29.97:8m,2m: %+v %v", f, err)
	}
	for _, bad := range []string{"60", "x:20m", "60:20M,0", "60:25p", "0:20m", "60:0", "60:20m,-1m"} {
		if _, err := isoch.Parse(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-u", "--isochronous", "-l", "100"}, "at least 232 bytes"},
	} {
		c := client(t, tc.args...)
		if _, err := sendConfig(c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
	// The rate flags against the frames are measure's checks, for
	// multicast and unicast alike.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-u", "--ipg", "1"}, "with --isochronous"},
		{[]string{"-u", "--isochronous", "-b", "10m"}, "the frames set the rate"},
	} {
		fs := measure.NewFlagSet("client")
		c := measure.NewClient()
		c.Register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if err := c.Finish(fs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
	c := client(t, "-u", "--isochronous", "--ipg", "0.5")
	cfg, err := sendConfig(c)
	if err != nil || cfg.Frames == nil || cfg.Frames.FPS != 60 || cfg.Frames.IPG != 500*time.Microsecond || cfg.Rate != 20e6 {
		t.Errorf("--isochronous alone, --ipg 0.5: %+v %v", cfg.Frames, err)
	}
}
