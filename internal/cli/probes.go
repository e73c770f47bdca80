package cli

import (
	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/runner"
)

// newPingCmd wires `wireperf ping HOST`: its flags are package measure's
// (a mesh's ping test runs this command), its run runner's.
func newPingCmd(e env) *cobra.Command {
	f := measure.NewPing()
	cmd := &cobra.Command{
		Use:   "ping HOST",
		Short: "ICMP echo to HOST, which runs nothing of wireperf's: RTT percentiles, loss, duplicates, TTL",
		Long: `ping sends ICMP echo requests through an unprivileged ping socket, which Linux
allows a user whose group is inside net.ipv4.ping_group_range (per network
namespace; Debian's default "1 0" admits no one): set it, for example with
sysctl net.ipv4.ping_group_range="0 2147483647", or run as root or with
CAP_NET_RAW and --raw.`,
		Example: `  wireperf ping host                           10 requests a second apart
  wireperf ping host --count 100 --interval 10ms --size 1400
  wireperf ping host -6 -J                     over IPv6, one JSON document
  wireperf ping host --raw                     a raw socket (root or CAP_NET_RAW)`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("ping needs exactly one HOST (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.Finish(); err != nil {
				return usageError{err}
			}
			return runner.Ping(cmd.Context(), e.stdout, args[0], f.Cfg, f.JSON)
		},
	}
	f.Register(cmd.Flags())
	return cmd
}

// newTCPConnectCmd wires `wireperf tcp-connect HOST:PORT`, as newPingCmd
// does ping.
func newTCPConnectCmd(e env) *cobra.Command {
	f := measure.NewTCPConnect()
	cmd := &cobra.Command{
		Use:   "tcp-connect HOST:PORT | HOST --tcp-port PORT",
		Short: "Time the TCP handshake to HOST:PORT, which runs nothing of wireperf's: percentiles, refused, timed out",
		Example: `  wireperf tcp-connect host:443                 10 connects a second apart
  wireperf tcp-connect host:22 --count 50 --interval 100ms --timeout 1s
  wireperf tcp-connect '[2001:db8::1]:80' -J    one JSON document`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("tcp-connect needs exactly one HOST:PORT, or HOST and --tcp-port (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.Finish(); err != nil {
				return usageError{err}
			}
			target, err := f.Target(args[0])
			if err != nil {
				return usageError{err}
			}
			return runner.TCPConnect(cmd.Context(), e.stdout, target, f.Cfg, f.JSON)
		},
	}
	f.Register(cmd.Flags())
	return cmd
}
