package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/version"
)

// newVersionCmd says which release this is, the commit it was built from and whether that tree
// had changes, so that a user's report names exactly what they ran.
func newVersionCmd(e env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print wireperf's release, the commit it was built from and whether that tree was modified",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			in := version.Get()
			if asJSON {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(in)
			}
			_, err := fmt.Fprintln(e.stdout, in.Long())
			return err
		},
	}
	cmd.Flags().BoolVarP(&asJSON, "json", "J", false, "print it as JSON")
	return cmd
}
