package repocheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// sleepReasons are the only reasons a test may sleep for a fixed time; a
// sleep that stands for an event waits for the event instead.
var sleepReasons = []string{"bounded poll", "load generator", "synctest"}

// unexplainedSleeps returns the lines of the time.Sleep calls in a
// parsed file that have no comment naming one of sleepReasons on the
// same line or the line above.
func unexplainedSleeps(fset *token.FileSet, f *ast.File) []int {
	said := map[int]string{} // line → the comment text on it
	for _, g := range f.Comments {
		for _, c := range g.List {
			from, to := fset.Position(c.Pos()).Line, fset.Position(c.End()).Line
			for l := from; l <= to; l++ {
				said[l] += c.Text
			}
		}
	}
	explained := func(line int) bool {
		for _, l := range []int{line, line - 1} {
			for _, r := range sleepReasons {
				if strings.Contains(said[l], r) {
					return true
				}
			}
		}
		return false
	}
	var lines []int
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Sleep" {
			return true
		}
		if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "time" {
			return true
		}
		if line := fset.Position(call.Pos()).Line; !explained(line) {
			lines = append(lines, line)
		}
		return true
	})
	return lines
}

// Every fixed sleep in a test under internal/ says why it is not a
// guess at how long an event takes: a bounded poll, a load generator's
// pace, or fake time in a synctest bubble.
func TestTestSleepsSayWhy(t *testing.T) {
	root := repoRoot(t)
	files := repoFiles(t, filepath.Join(root, "internal"), func(name string) bool { return strings.HasSuffix(name, "_test.go") })
	if len(files) == 0 {
		t.Fatal("no test files under internal/")
	}
	for _, path := range files {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		for _, line := range unexplainedSleeps(fset, f) {
			t.Errorf("%s:%d: time.Sleep without a comment saying %q on its line or the line above: wait for the event instead, or say why it is none",
				rel, line, strings.Join(sleepReasons, `", "`))
		}
	}
}

func TestUnexplainedSleeps(t *testing.T) {
	const src = `package p

import "time"

func f(poll func() bool) {
	time.Sleep(time.Second)
	for !poll() {
		time.Sleep(time.Millisecond) // bounded poll: poll(), until it holds
	}
	// load generator: one datagram per millisecond
	time.Sleep(time.Millisecond)
	// the server may be slow
	time.Sleep(time.Second)
	/* synctest: fake time */ time.Sleep(time.Hour)
	// bounded poll: two lines above does not count

	time.Sleep(time.Second)
	go func() { time.Sleep(time.Minute) }()
}

// time.Sleep in a comment is no call.
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	got := unexplainedSleeps(fset, f)
	want := []int{6, 13, 17, 18}
	if len(got) != len(want) {
		t.Fatalf("unexplained sleeps on lines %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("unexplained sleeps on lines %v, want %v", got, want)
		}
	}
}
