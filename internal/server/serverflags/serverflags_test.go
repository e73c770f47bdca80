package serverflags

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/spec"
)

func parse(t *testing.T, args ...string) *Flags {
	t.Helper()
	f := New()
	fs := pflag.NewFlagSet("server", pflag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestDefaults(t *testing.T) {
	f := parse(t)
	if err := f.Finish(); err != nil {
		t.Fatal(err)
	}
	if f.Config.Port != spec.DefaultPort || f.Interval != time.Second || f.JSON ||
		f.Config.ShutdownGrace != server.DefaultShutdownGrace || f.Config.Limits != server.DefaultLimits() {
		t.Errorf("defaults: port %d, -i %v, -J %v, grace %v, limits %+v", f.Config.Port, f.Interval, f.JSON, f.Config.ShutdownGrace, f.Config.Limits)
	}
}

func TestFinishRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-i", "0.005"}, "-i 5ms: want 0 (no rows) or at least 10ms"},
		{[]string{"-p", "70000"}, "-p 70000: want 0 to 65535"},
		{[]string{"--max-tests", "-1"}, "limits must not be negative"},
		{[]string{"--client-prefix-v4", "33"}, "--client-prefix-v4 wants 1 to 32, --client-prefix-v6 1 to 128"},
	} {
		err := parse(t, c.args...).Finish()
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", strings.Join(c.args, " "), err, c.want)
		}
	}
	if err := parse(t, "-i", "0", "-p", "0").Finish(); err != nil {
		t.Errorf("-i 0 -p 0: %v", err)
	}
}
