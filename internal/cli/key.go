package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/auth/authflags"
)

func newKeyCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "key",
		Short: "Make keys for --auth-key-file, --agent-key-file and --client-key-file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("say new")
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "new [NAME]",
		Short: "Print a new key line: NAME and 256 random bits in hex",
		Long: `wireperf key new prints one line of a key file: a name (default: your user name) and a
fresh key of 256 random bits. A client's file holds its own line; a server's file holds every
user's. Key files must be readable by their owner only:

  umask 077; wireperf key new alice > ~/.config/wireperf/key

Keys under 128 bits, or plainly not random, are refused wherever a key file is read.`,
		Example: `  umask 077; wireperf key new alice > alice.key
  cat alice.key >> /etc/wireperf/keys   # on the server, also mode 600`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := authflags.KeyName(args)
			if err != nil {
				return usageError{err}
			}
			line, err := authflags.KeyLine(name)
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, line)
			return nil
		},
	})
	return cmd
}
