package measure

import (
	"strings"
	"testing"
	"time"
)

// --isochronous and --ipg put the frames in the spec of a UDP test, in
// place of -b's default rate; what they cannot go with is refused in one
// line.
func TestIsochronousFlag(t *testing.T) {
	c := parseClient(t, "-u", "--isochronous=30:8m,2m", "--ipg", "0.25", "-R")
	f := c.Spec.Isochronous
	if f == nil || f.FPS != 30 || f.Mean != 8e6 || f.Stdev != 2e6 || f.IPG != 250*time.Microsecond {
		t.Fatalf("spec frames %+v", f)
	}
	if c.Spec.Rate != 0 {
		t.Errorf("rate %g beside the frames: want none (the frames set it)", c.Spec.Rate)
	}
	if c := parseClient(t, "-u", "--isochronous"); c.Spec.Isochronous == nil || c.Spec.Isochronous.FPS != 60 || c.Spec.Isochronous.Mean != 20e6 {
		t.Errorf("--isochronous alone: %+v, want iperf 2's 60:20m,0", c.Spec.Isochronous)
	}
	if c := parseClient(t, "-u"); c.Spec.Isochronous != nil || c.Spec.Rate != 1e6 {
		t.Errorf("-u alone: frames %+v, rate %g", c.Spec.Isochronous, c.Spec.Rate)
	}
	for args, want := range map[string]string{
		"--isochronous":                 "--isochronous applies to UDP tests",
		"-u --ipg 1":                    "--ipg: the gap between the datagrams of a frame, with --isochronous",
		"-u --isochronous -b 10m":       "choose one (the frames set the rate)",
		"-u --isochronous --pps 100":    "choose one",
		"-u --isochronous --spacing 1m": "choose one",
		"-u --isochronous=60:20M":       "--isochronous 60:20M:",
		"-u --isochronous --ipg 2000":   "--ipg 2000: 0 to 1000 ms",
		"-u --isochronous -l 40":        "-l 40: an isochronous datagram carries its frame's fields",
	} {
		if _, _, err := Parse(KindClient, strings.Fields(args)); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want one line with %q", args, err, want)
		}
	}
}
