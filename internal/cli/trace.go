package cli

import (
	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/runner"
)

// newTraceCmd wires `wireperf trace HOST`: the trace's flags are package
// measure's (a mesh's trace test runs this command), its run runner's.
func newTraceCmd(e env) *cobra.Command {
	f := measure.NewTrace()
	cmd := &cobra.Command{
		Use:   "trace HOST",
		Short: "Discover the path to HOST, as traceroute does (Linux; no privilege needed)",
		Example: `  wireperf trace host                    UDP probes, 30 hops, 3 a hop
  wireperf trace host --proto icmp       ICMP echo requests (a ping socket: net.ipv4.ping_group_range)
  wireperf trace host --raw              answers through a raw socket (root or CAP_NET_RAW)
  wireperf trace host --probes 1 -J      one probe a hop, one JSON document`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("trace needs exactly one HOST (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.Finish(); err != nil {
				return usageError{err}
			}
			return runner.Trace(cmd.Context(), e.stdout, args[0], f.Cfg, f.JSON)
		},
	}
	f.Register(cmd.Flags())
	return cmd
}
