package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/mesh"
)

// newMeshImportCmd is `wireperf mesh import --psconfig FILE`: a perfSONAR
// mesh brought over as a mesh file, with a warning for each key it leaves
// behind.
func newMeshImportCmd(e env) *cobra.Command {
	var from, out, name string
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Write a mesh file from a perfSONAR pSConfig template",
		Long: `wireperf mesh import reads a perfSONAR pSConfig template (JSON) and writes the mesh file that
schedules the same tests between the same hosts: throughput tests as client tests, rtt as ping,
latency and latencybg as rr, trace as trace; mesh, disjoint and list groups as pairs; schedules with
their repeat, slip, start, until and max-runs. Each key it can't carry (archives, tools, priorities,
jq templates, includes, address classes …) is named on one warning line; nothing is left out
silently. The file it writes is checked as mesh apply checks one, and a host the mesh would keep
busier than 100% is named.`,
		Example: `  wireperf mesh import --psconfig psconfig.json -o mesh.yaml
  wireperf mesh apply --dry-run -f mesh.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" {
				return usagef("mesh import needs a template: --psconfig FILE")
			}
			data, err := readFileAtMost(from, mesh.MaxFileSize)
			if err != nil {
				return usageError{err}
			}
			if name == "" {
				name = strings.TrimSuffix(filepath.Base(from), filepath.Ext(from))
			}
			target := out
			if target == "" || target == "-" {
				target = "mesh.yaml" // the name errors about it give
			}
			imp, err := mesh.FromPSConfig(name, target, data)
			for _, w := range imp.Warnings {
				fmt.Fprintf(e.stderr, "wireperf: warning: %s\n", w)
			}
			if err != nil {
				return usageError{err}
			}
			m := imp.Mesh
			if warning, overfull := m.CheckUtilisation(); overfull != nil {
				fmt.Fprintf(e.stderr, "wireperf: warning: mesh apply will refuse this mesh until its schedules change: %v\n", overfull)
			} else if warning != "" {
				fmt.Fprintf(e.stderr, "wireperf: warning: %s\n", warning)
			}
			if out == "" || out == "-" {
				_, err = e.stdout.Write(imp.YAML)
				return err
			}
			if err := os.WriteFile(out, imp.YAML, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "mesh %s: %d hosts, %d schedules written to %s\n", name, len(m.Hosts), len(m.Schedules), out)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "psconfig", "", "the pSConfig template (JSON) to import")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the mesh file here (default: standard output)")
	cmd.Flags().StringVar(&name, "name", "", "the mesh's name, its tasks' origin (default: the template's file name)")
	return cmd
}
