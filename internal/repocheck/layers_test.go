package repocheck

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/wireperf/wireperf/internal/repocheck/pkgmap"
)

const module = "github.com/wireperf/wireperf/"

// The layers of the module are docs/architecture.md's: the fenced block
// under "## Layers" is read here, and the tests below hold the code to
// it. Its lines:
//
//	NAME  PKG PKG …          a layer (the first line is the top); a line
//	      PKG PKG …          that starts with a space goes on with it
//	allow PKG -> PKG: WHY    an import that runs up across the layers
//	never PKG … -> PKG …: WHY  imports that may not be made, directly or not
//
// A PKG is a path under internal/ ("rr/rrcontrol"), or from the module's
// root when it starts with cmd/ or bench/; "dir/*" is every package under
// dir. The layer named "beside" holds what only tests and bench/ import.
const (
	layersDoc     = "docs/architecture.md"
	layersHeading = "## Layers"
	besideLayer   = "beside"
)

// layerPlan is the block as the tests read it.
type layerPlan struct {
	names   []string        // the layers, the bottom first
	entries []layerEntry    // every PKG of the layers, in the block's order
	allow   map[edge]string // exceptions, with their reasons
	never   []neverRule
}

type layerEntry struct {
	pattern string // as the block spells it
	rank    int    // index in names; -1 for beside
	line    int
}

// edge is an import of one of the module's packages by another, both
// relative to the module's root ("internal/measure").
type edge struct{ from, to string }

func (e edge) String() string { return e.from + " -> " + e.to }

type neverRule struct {
	from, to []string
	why      string
	line     int
}

// pkgPath is the package a block name stands for, relative to the root.
func pkgPath(name string) string {
	if strings.HasPrefix(name+"/", "cmd/") || strings.HasPrefix(name+"/", "bench/") {
		return name
	}
	return "internal/" + name
}

// matches says whether a block pattern names the package at path.
func matches(pattern, path string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/*"); ok {
		return strings.HasPrefix(path, pkgPath(dir)+"/")
	}
	return pkgPath(pattern) == path
}

// readLayers reads the Layers block of docs/architecture.md.
func readLayers(t *testing.T, root string) *layerPlan {
	t.Helper()
	f, err := os.Open(filepath.Join(root, layersDoc))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	plan, err := parseLayers(bufio.NewScanner(f))
	if err != nil {
		t.Fatalf("%s, the block under %q: %v", layersDoc, layersHeading, err)
	}
	return plan
}

// parseLayers reads the first fenced block after the Layers heading.
func parseLayers(sc *bufio.Scanner) (*layerPlan, error) {
	plan := &layerPlan{allow: map[edge]string{}}
	var top []string // layer names as listed, the top first
	var ranks []int  // each entry's layer, as an index in top
	state := 0       // 0: before the heading, 1: before the fence, 2: in it, 3: done
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch state {
		case 0:
			if strings.TrimSpace(line) == layersHeading {
				state = 1
			}
			continue
		case 1:
			if strings.HasPrefix(line, "```") {
				state = 2
			} else if strings.HasPrefix(line, "## ") {
				return nil, fmt.Errorf("no fenced block")
			}
			continue
		case 3:
			continue
		}
		if strings.HasPrefix(line, "```") {
			state = 3
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		switch {
		case fields[0] == "allow" || fields[0] == "never":
			rule, why, ok := strings.Cut(strings.TrimSpace(line)[len(fields[0]):], ":")
			from, to, arrow := strings.Cut(rule, "->")
			why = strings.TrimSpace(why)
			if !ok || !arrow || why == "" || len(strings.Fields(from)) == 0 || len(strings.Fields(to)) == 0 {
				return nil, fmt.Errorf("line %d: want %q", n, fields[0]+" PKG -> PKG: why")
			}
			if fields[0] == "never" {
				plan.never = append(plan.never, neverRule{from: strings.Fields(from), to: strings.Fields(to), why: why, line: n})
				continue
			}
			if len(strings.Fields(from)) != 1 || len(strings.Fields(to)) != 1 {
				return nil, fmt.Errorf("line %d: an allow names one import", n)
			}
			plan.allow[edge{pkgPath(strings.TrimSpace(from)), pkgPath(strings.TrimSpace(to))}] = why
		case line[0] == ' ' || line[0] == '\t':
			if len(top) == 0 {
				return nil, fmt.Errorf("line %d: packages before the first layer", n)
			}
			for _, p := range fields {
				plan.entries = append(plan.entries, layerEntry{pattern: p, line: n})
				ranks = append(ranks, len(top)-1)
			}
		default:
			top = append(top, fields[0])
			for _, p := range fields[1:] {
				plan.entries = append(plan.entries, layerEntry{pattern: p, line: n})
				ranks = append(ranks, len(top)-1)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if state < 2 {
		return nil, fmt.Errorf("no fenced block")
	}
	// Ranks count from the bottom; beside has none.
	rankOf := make([]int, len(top))
	for i := len(top) - 1; i >= 0; i-- {
		if top[i] == besideLayer {
			rankOf[i] = -1
			continue
		}
		rankOf[i] = len(plan.names)
		plan.names = append(plan.names, top[i])
	}
	for i := range plan.entries {
		plan.entries[i].rank = rankOf[ranks[i]]
	}
	if len(plan.names) == 0 {
		return nil, fmt.Errorf("no layers")
	}
	return plan, nil
}

// entryOf is the entry that names the package at path, or nil.
func (p *layerPlan) entryOf(path string) *layerEntry {
	for i := range p.entries {
		if matches(p.entries[i].pattern, path) {
			return &p.entries[i]
		}
	}
	return nil
}

func (p *layerPlan) layerName(rank int) string {
	if rank < 0 {
		return besideLayer
	}
	return p.names[rank]
}

// pendingUpward are the imports that run up across the layers today and
// that work under way removes (issue 37; each row names the branch). The
// layer rule tolerates them and the never rules are checked as if they
// were gone. Once one is gone TestLayersHoldImports fails until its row
// is deleted, so this list only shrinks: merging the branch that removes
// an import deletes its row.
var pendingUpward = map[edge]string{}

var (
	packagesOnce sync.Once
	packages     []pkgmap.Package
	packagesErr  error
)

// modulePackages are the module's packages as the package map lists them
// (go list, once for all the tests).
func modulePackages(t *testing.T, root string) []pkgmap.Package {
	t.Helper()
	packagesOnce.Do(func() { packages, packagesErr = pkgmap.List(root) })
	if packagesErr != nil {
		t.Fatal(packagesErr)
	}
	return packages
}

// modulePaths are the module's packages, relative to its root.
func modulePaths(t *testing.T, root string) []string {
	t.Helper()
	var paths []string
	for _, p := range modulePackages(t, root) {
		paths = append(paths, p.Path)
	}
	return paths
}

var (
	importsMu    sync.Mutex
	importsCache = map[string][]string{}
)

// directImports are the module's packages that pkg ("internal/x")
// imports from its non-test files, on any platform: every file is read
// whatever its build constraints, so the set is the union over GOOS.
func directImports(t *testing.T, root, pkg string) []string {
	t.Helper()
	importsMu.Lock()
	defer importsMu.Unlock()
	if deps, ok := importsCache[pkg]; ok {
		return deps
	}
	files, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no Go files (%v)", pkg, err)
	}
	seen := map[string]bool{}
	var deps []string
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
			if dep, ok := strings.CutPrefix(path, module); ok && !seen[dep] {
				seen[dep] = true
				deps = append(deps, dep)
			}
		}
	}
	sort.Strings(deps)
	importsCache[pkg] = deps
	return deps
}

// internalImports is every package of the module that pkg imports,
// directly or not, from non-test files on any platform, leaving out the
// imports skip names.
func internalImports(t *testing.T, root, pkg string, skip map[edge]string) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	var visit func(p string)
	visit = func(p string) {
		for _, dep := range directImports(t, root, p) {
			if _, ok := skip[edge{p, dep}]; ok || seen[dep] {
				continue
			}
			seen[dep] = true
			visit(dep)
		}
	}
	visit(pkg)
	return seen
}

// TestLayersNameEveryPackage: every package of the module is in exactly
// one layer, and every name in the block is a package (or, for "dir/*",
// has one).
func TestLayersNameEveryPackage(t *testing.T) {
	root := repoRoot(t)
	plan := readLayers(t, root)
	pkgs := modulePaths(t, root)
	used := make([]bool, len(plan.entries))
	for _, p := range pkgs {
		var in []string
		for i, e := range plan.entries {
			if matches(e.pattern, p) {
				used[i] = true
				in = append(in, fmt.Sprintf("%s (line %d)", e.pattern, e.line))
			}
		}
		switch len(in) {
		case 0:
			t.Errorf("%s is in no layer of %s: add it to the layer it belongs to (see the layers' prose)", p, layersDoc)
		case 1:
		default:
			t.Errorf("%s is named %d times in %s's layers: %s", p, len(in), layersDoc, strings.Join(in, ", "))
		}
	}
	for i, e := range plan.entries {
		if !used[i] {
			t.Errorf("%s line %d: %s names no package of the module (moved or removed?)", layersDoc, e.line, e.pattern)
		}
	}
	for _, r := range plan.never {
		for _, p := range append(append([]string{}, r.from...), r.to...) {
			if !contains(pkgs, pkgPath(p)) {
				t.Errorf("%s line %d: never names %s, which is no package of the module", layersDoc, r.line, p)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestLayersHoldImports: a package imports only packages of its own
// layer or of layers below it, save the exceptions the block allows
// (each with its reason) and pendingUpward; no package of the layers
// imports one that is beside them. An exception or a pending import that
// no longer runs up across the layers fails too, so neither list keeps a
// stale row.
func TestLayersHoldImports(t *testing.T) {
	root := repoRoot(t)
	plan := readLayers(t, root)
	seenAllow, seenPending := map[edge]bool{}, map[edge]bool{}
	for _, p := range modulePaths(t, root) {
		from := plan.entryOf(p)
		if from == nil || from.rank < 0 {
			continue // TestLayersNameEveryPackage names it; beside imports anything
		}
		for _, dep := range directImports(t, root, p) {
			to := plan.entryOf(dep)
			e := edge{p, dep}
			switch {
			case to == nil:
				continue
			case to.rank < 0:
				t.Errorf("%s imports %s, which is beside the layers (only tests and bench/ may import it)", p, dep)
				continue
			case to.rank <= from.rank:
				continue
			}
			if _, ok := plan.allow[e]; ok {
				seenAllow[e] = true
				continue
			}
			if _, ok := pendingUpward[e]; ok {
				seenPending[e] = true
				continue
			}
			t.Errorf("%s (layer %s) imports %s (layer %s, above it): import the other way, move one of them to another layer in %s, or name the exception there (allow %s: why)",
				p, plan.layerName(from.rank), dep, plan.layerName(to.rank), layersDoc, strings.ReplaceAll(e.String(), "internal/", ""))
		}
	}
	for e, why := range plan.allow {
		if !seenAllow[e] {
			t.Errorf("%s allows %s (%s), but it is no import that runs up across the layers: delete the exception", layersDoc, e, why)
		}
	}
	for e, why := range pendingUpward {
		if !seenPending[e] {
			t.Errorf("pendingUpward lists %s (%s), but it is no longer an import that runs up across the layers: delete its row", e, why)
		}
	}
}

// TestLayersNever: the block's never rules hold, directly or not (the
// imports that pendingUpward lists left out, as they are on their way
// out). Among them is issue 37's acceptance: the model of a test, the
// schedule and the results archive reach no session, control, flow,
// emitter or server package.
func TestLayersNever(t *testing.T) {
	root := repoRoot(t)
	plan := readLayers(t, root)
	if len(plan.never) == 0 {
		t.Fatalf("%s's layers have no never rule", layersDoc)
	}
	for _, r := range plan.never {
		for _, from := range r.from {
			deps := internalImports(t, root, pkgPath(from), pendingUpward)
			for _, to := range r.to {
				if deps[pkgPath(to)] {
					t.Errorf("%s imports %s, directly or not: %s (%s line %d)", from, to, r.why, layersDoc, r.line)
				}
			}
		}
	}
}

// TestParseLayers: the block's syntax, ranks counted from the bottom
// whichever line beside is on.
func TestParseLayers(t *testing.T) {
	doc := "# x\n## Layers\n\ntext\n\n```\ntop   cli\nmid   a b\n      c/*\nbeside t/*\nlow   d\nallow d -> a: because\n  allow d -> b:  aligned\nnever a -> b c: why not\n```\n"
	plan, err := parseLayers(bufio.NewScanner(strings.NewReader(doc)))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(plan.names, " "); got != "low mid top" {
		t.Errorf("layers %q, want the bottom first", got)
	}
	want := map[string]int{"cli": 2, "a": 1, "b": 1, "c/*": 1, "t/*": -1, "d": 0}
	for _, e := range plan.entries {
		if want[e.pattern] != e.rank {
			t.Errorf("%s: rank %d, want %d", e.pattern, e.rank, want[e.pattern])
		}
	}
	if len(plan.entries) != len(want) {
		t.Errorf("%d entries, want %d", len(plan.entries), len(want))
	}
	if plan.allow[edge{"internal/d", "internal/a"}] != "because" || plan.allow[edge{"internal/d", "internal/b"}] != "aligned" {
		t.Errorf("allow: %v", plan.allow)
	}
	if len(plan.never) != 1 || strings.Join(plan.never[0].to, " ") != "b c" || plan.never[0].why != "why not" {
		t.Errorf("never: %+v", plan.never)
	}
	if !matches("c/*", "internal/c/x/y") || matches("c/*", "internal/c") || !matches("bench/*", "bench/truth") {
		t.Error("patterns")
	}
	for _, bad := range []string{
		"## Layers\n```\n  a\n```\n",               // packages before a layer
		"## Layers\n```\nl a\nallow a -> b\n```\n", // no reason
		"## Layers\n```\nl a\nallow a b -> c: x\n```\n",
		"## Layers\ntext\n## Next\n",
	} {
		if _, err := parseLayers(bufio.NewScanner(strings.NewReader(bad))); err == nil {
			t.Errorf("%q: no error", bad)
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
	direct := directImports(t, root, "internal/cli")
	if len(direct) > maxCLIImports {
		t.Errorf("internal/cli imports %d of the module's packages, at most %d allowed: move the code that needs the extra ones into the package that owns the command's work\n%s",
			len(direct), maxCLIImports, strings.Join(direct, "\n"))
	}
}
