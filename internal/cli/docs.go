package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/wireperf/wireperf/internal/version"
)

// newManCmd writes a man page for every command, from the same
// definitions that print --help, so the two cannot drift apart. Shell
// completions come from cobra's own `completion` command.
func newManCmd(e env) *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write wireperf's man pages (section 1), one per command, into DIR",
		Example: `  wireperf man build/man            wireperf.1, wireperf-client.1, ...
  man -l build/man/wireperf-client.1`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("say where to write the man pages: wireperf man DIR (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			header := &doc.GenManHeader{Title: "WIREPERF", Section: "1", Source: "wireperf " + version.String(), Manual: "wireperf manual"}
			root := cmd.Root()
			root.DisableAutoGenTag = true // no date line: the pages stay the same from run to run
			if err := doc.GenManTree(root, header, dir); err != nil {
				return fmt.Errorf("writing the man pages: %w", err)
			}
			_, err := fmt.Fprintf(e.stdout, "man pages written to %s\n", dir)
			return err
		},
	}
}
