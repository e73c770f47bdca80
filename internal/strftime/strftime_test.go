package strftime

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	at := time.Date(2026, time.December, 4, 8, 5, 9, 0, time.FixedZone("", 5*3600+30*60))
	for format, want := range map[string]string{
		"%c ":               "Fri Dec  4 08:05:09 2026 ",
		"%Y-%m-%d %H:%M:%S": "2026-12-04 08:05:09",
		"%F %T %z":          "2026-12-04 08:05:09 +0530",
		"%s":                "1796351709",
		"100%% at %H":       "100% at 08",
		"no conversions":    "no conversions",
	} {
		if got := Format(format, at); got != want {
			t.Errorf("Format(%q) = %q, want %q", format, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, ok := range []string{"%c ", "%F %T%z", "%%", "plain"} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"%a", "%Q", "ends with %"} {
		if err := Check(bad); err == nil {
			t.Errorf("Check(%q) accepted it", bad)
		}
	}
}

// TestMatchesDate checks the C locale's renderings against date(1),
// which uses strftime itself, where it is installed.
func TestMatchesDate(t *testing.T) {
	if _, err := exec.LookPath("date"); err != nil {
		t.Skip("no date(1) to compare with")
	}
	at := time.Unix(1796439309, 0).UTC()
	for _, format := range []string{"%c", "%F %T %z", "%Y%m%d%H%M%S %s"} {
		cmd := exec.Command("date", "-u", "-d", "@1796439309", "+"+format)
		cmd.Env = []string{"LC_ALL=C", "TZ=UTC"}
		out, err := cmd.Output()
		if err != nil {
			t.Skipf("date(1) does not take -d @seconds: %v", err)
		}
		if got, want := Format(format, at), strings.TrimRight(string(out), "\n"); got != want {
			t.Errorf("Format(%q) = %q, date(1) says %q", format, got, want)
		}
	}
}
