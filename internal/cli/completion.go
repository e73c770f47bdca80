package cli

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/plot/plotarchive"
)

// completionCommands are cobra's hidden commands that shells call to
// complete a command line; their arguments are the line being typed.
var completionCommands = map[string]bool{
	cobra.ShellCompRequestCmd:       true,
	cobra.ShellCompNoDescRequestCmd: true,
}

// iperfStyleCompletion applies iperfStyle to the line a shell asks to
// complete, so that `wireperf -c host -<TAB>` completes the client's
// flags instead of failing on the root's unknown -c.
func iperfStyleCompletion(args []string) []string {
	if len(args) < 2 || !completionCommands[args[0]] {
		return args
	}
	return append([]string{args[0]}, iperfStyle(args[1:])...)
}

// addCompletions gives the commands whose arguments are one of a fixed
// set their completions: plot's figure kinds and a task's test kinds.
func addCompletions(root *cobra.Command) {
	for _, c := range root.Commands() {
		switch c.Name() {
		case "plot":
			c.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 {
					if args[0] == "compare" && len(args) == 1 {
						return withoutCompare(), cobra.ShellCompDirectiveNoFileComp
					}
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return plotarchive.Kinds, cobra.ShellCompDirectiveNoFileComp
			}
		case "client":
			_ = c.RegisterFlagCompletionFunc("congestion", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return availableCongestionControls(), cobra.ShellCompDirectiveNoFileComp
			})
		case "task":
			for _, sub := range c.Commands() {
				if sub.Name() != "add" {
					continue
				}
				_ = sub.RegisterFlagCompletionFunc("test", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
					return testKinds(), cobra.ShellCompDirectiveNoFileComp
				})
				_ = sub.RegisterFlagCompletionFunc("class", cobra.FixedCompletions([]string{"exclusive", "background"}, cobra.ShellCompDirectiveNoFileComp))
			}
		}
	}
}

// withoutCompare is the kinds compare overlays: every figure of one run.
func withoutCompare() []string {
	var out []string
	for _, k := range plotarchive.Kinds {
		if k != "compare" && k != "sweep" && k != "heatmap" {
			out = append(out, k)
		}
	}
	return out
}

// testKinds are a test line's first words.
func testKinds() []string {
	var out []string
	for _, k := range measure.Kinds {
		out = append(out, string(k))
	}
	return out
}

// availableCongestionControls are the algorithms this host's kernel
// offers (Linux); elsewhere none are offered.
func availableCongestionControls() []string {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}
