package repocheck

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/wireperf/wireperf/"

// internalImports is every package of the module that pkg ("internal/x")
// imports, directly or not, from its non-test files on any platform.
func internalImports(t *testing.T, root, pkg string) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	var visit func(p string)
	visit = func(p string) {
		files, err := filepath.Glob(filepath.Join(root, p, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", p, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, im := range src.Imports {
				path, _ := strconv.Unquote(im.Path.Value)
				dep, ok := strings.CutPrefix(path, module)
				if !ok || seen[dep] {
					continue
				}
				seen[dep] = true
				visit(dep)
			}
		}
	}
	visit(pkg)
	return seen
}

// TestControlChannelBelowItsTests: the control channel every native test
// uses knows none of the tests run over it, and request-response's
// control plane does not carry the bulk test's lifecycle with it.
func TestControlChannelBelowItsTests(t *testing.T) {
	root := repoRoot(t)
	forbidden := map[string][]string{
		"internal/control":      {"internal/session", "internal/rr/rrcontrol", "internal/iperf3", "internal/server", "internal/runner"},
		"internal/rr/rrcontrol": {"internal/session"},
	}
	pkgs := make([]string, 0, len(forbidden))
	for p := range forbidden {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		deps := internalImports(t, root, p)
		for _, f := range forbidden[p] {
			if deps[f] {
				t.Errorf("%s imports %s (directly or not): the control channel must stay below the tests run over it", p, f)
			}
		}
	}
}

// maxCLIImports is how many of the module's packages internal/cli may
// import directly. cli wires commands: each command's flags, runs and
// views come from the package that owns them (measure and runner,
// serverflags, guide, group, campaign, the archive's views, …), and the
// result, spec, emit, server, runrecord and flagvalue packages reach it
// only through those. A new direct import either replaces one or says
// that some wiring stayed in cli.
const maxCLIImports = 16

// TestCLIImportsFewPackages: internal/cli imports at most maxCLIImports
// of the module's packages (non-test files, any platform).
func TestCLIImportsFewPackages(t *testing.T) {
	root := repoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "internal", "cli", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("internal/cli: no Go files (%v)", err)
	}
	direct := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range src.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if dep, ok := strings.CutPrefix(path, module); ok {
				direct[dep] = true
			}
		}
	}
	if len(direct) > maxCLIImports {
		names := make([]string, 0, len(direct))
		for p := range direct {
			names = append(names, p)
		}
		sort.Strings(names)
		t.Errorf("internal/cli imports %d of the module's packages, at most %d allowed: move the code that needs the extra ones into the package that owns the command's work\n%s",
			len(direct), maxCLIImports, strings.Join(names, "\n"))
	}
}
