package mesh

import (
	"fmt"

	"github.com/wireperf/wireperf/internal/psconfig"
)

// Imported is a mesh file written from a perfSONAR pSConfig template: its
// bytes, the mesh they read back as, and a warning a line for each key
// the template carried that a mesh file doesn't.
type Imported struct {
	YAML     []byte
	Mesh     *Mesh
	Warnings []string
}

// FromPSConfig writes the mesh file of a pSConfig template (package
// psconfig) and reads it back as any mesh file is read, so that what it
// returns is a mesh `mesh apply` takes (or refuses for its utilisation
// only). file names the mesh file in errors. With an error, Warnings may
// still say what was left out on the way.
func FromPSConfig(name, file string, template []byte) (*Imported, error) {
	imp, err := psconfig.Convert(name, template)
	if err != nil {
		var warnings []string
		if imp != nil {
			warnings = imp.Warnings
		}
		return &Imported{Warnings: warnings}, err
	}
	m, err := Parse(file, imp.YAML)
	if err != nil {
		// The importer writes only what a mesh file carries: this is its
		// own fault.
		return &Imported{Warnings: imp.Warnings}, fmt.Errorf("the mesh written would not be read back: %w", err)
	}
	return &Imported{YAML: imp.YAML, Mesh: m, Warnings: imp.Warnings}, nil
}
