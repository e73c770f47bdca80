package pkgbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ReleaseSuffixes are the artefacts SHA256SUMS lists.
var ReleaseSuffixes = []string{".tar.gz", ".zip", ".deb", ".rpm", ".oci.tar"}

// WriteSums writes dir/SHA256SUMS for every release artefact directly in dir, sorted by name,
// in the format `sha256sum -c` reads.
func WriteSums(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		for _, s := range ReleaseSuffixes {
			if strings.HasSuffix(e.Name(), s) {
				names = append(names, e.Name())
				break
			}
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		sum, err := fileSHA256(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, n)
	}
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(b.String()), 0o644)
}

func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
