// Command pkgmap rewrites the package map of docs/architecture.md from
// the packages' doc comments (internal/repocheck/pkgmap); with -check it
// only says whether the map is up to date. Run it from anywhere in the
// module: `make pkgmap`, or `go run ./internal/repocheck/cmd/pkgmap`.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wireperf/wireperf/internal/repocheck/pkgmap"
)

func main() {
	check := flag.Bool("check", false, "change nothing: exit 1 when the map is out of date, listing the rows that differ")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: %s [-check]\n", pkgmap.Command)
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "pkgmap: unexpected argument %q (usage: %s [-check])\n", flag.Arg(0), pkgmap.Command)
		os.Exit(2)
	}
	if err := run(*check); err != nil {
		fmt.Fprintf(os.Stderr, "pkgmap: %v\n", err)
		os.Exit(1)
	}
}

func run(check bool) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	current, want, err := pkgmap.Generate(root)
	if err != nil {
		return err
	}
	switch {
	case bytes.Equal(current, want):
		fmt.Printf("%s: the package map is up to date\n", pkgmap.Doc)
		return nil
	case check:
		return fmt.Errorf("%s: the package map is out of date; run %s (make pkgmap)\n%s", pkgmap.Doc, pkgmap.Command, pkgmap.Diff(current, want))
	}
	path := filepath.Join(root, filepath.FromSlash(pkgmap.Doc))
	if err := os.WriteFile(path, want, 0o644); err != nil {
		return err
	}
	fmt.Printf("%s: package map rewritten\n%s\n", pkgmap.Doc, pkgmap.Diff(current, want))
	return nil
}

// moduleRoot walks up from the working directory to the one holding
// go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod in the working directory or above it")
		}
		dir = parent
	}
}
