package repocheck

import (
	"bytes"
	"testing"

	"github.com/wireperf/wireperf/internal/repocheck/pkgmap"
)

// TestPackageMap checks that docs/architecture.md's package map is what
// the generator writes: a package added, removed or moved, or a changed
// first sentence of a package doc comment, fails until the map is
// regenerated.
func TestPackageMap(t *testing.T) {
	root := repoRoot(t)
	current, want, err := pkgmap.Generate(root)
	if err != nil {
		t.Fatalf("%v\n(then regenerate the map: make pkgmap, or %s)", err, pkgmap.Command)
	}
	if !bytes.Equal(current, want) {
		t.Errorf("%s: the package map is out of date; regenerate it with `make pkgmap` (or %s) and commit the result:\n%s",
			pkgmap.Doc, pkgmap.Command, pkgmap.Diff(current, want))
	}
	// The packages were read by a `go list` child, whose reads go test's
	// result cache does not see. Walking the tree here records every
	// directory's listing (names, sizes, times), so that a new package or
	// an edited doc comment runs the test again instead of replaying a
	// cached pass.
	repoFiles(t, root, func(string) bool { return false })
}
