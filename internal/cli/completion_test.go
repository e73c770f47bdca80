package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/plot/plotarchive"
)

// completions runs the shell's completion request for line and returns
// the offered words (cobra prints one per line, then ":DIRECTIVE").
func completions(t *testing.T, line ...string) []string {
	t.Helper()
	code, out, stderr := runCLI(append([]string{"__completeNoDesc"}, line...)...)
	if code != ExitOK {
		t.Fatalf("completing %q: exit %d: %s", line, code, stderr)
	}
	var words []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" || strings.HasPrefix(l, ":") {
			continue
		}
		words = append(words, l)
	}
	return words
}

func TestCompletionAfterIperfStyleClient(t *testing.T) {
	got := completions(t, "-c", "127.0.0.1", "--conn")
	if !slices.Contains(got, "--connect-timeout") {
		t.Fatalf("-c HOST --conn<TAB> offered %q, want the client's --connect-timeout", got)
	}
	got = completions(t, "-t", "5", "-c", "h", "-")
	if !slices.Contains(got, "-P") && !slices.Contains(got, "--parallel") {
		t.Fatalf("-t 5 -c h -<TAB> offered %q, want the client's flags", got)
	}
}

func TestCompletionOfPlotKindsAndTestKinds(t *testing.T) {
	if got := completions(t, "plot", ""); !slices.Equal(got, plotarchive.Kinds) {
		t.Fatalf("plot <TAB> offered %q, want %q", got, plotarchive.Kinds)
	}
	got := completions(t, "plot", "compare", "")
	if slices.Contains(got, "compare") || !slices.Contains(got, "latency") {
		t.Fatalf("plot compare <TAB> offered %q, want one run's figures", got)
	}
	got = completions(t, "task", "add", "--test", "")
	for _, want := range []string{"client", "rr", "udpmon"} {
		if !slices.Contains(got, want) {
			t.Fatalf("task add --test <TAB> offered %q, want %q", got, want)
		}
	}
}
