package pkgmap

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	pkgs := []Package{
		{Path: "cmd/tool", Synopsis: "Command tool does one thing."},
		{Path: "internal/a", Synopsis: "Package a splits a|b."},
	}
	got := Table(pkgs, "docs/architecture.md")
	want := "| Package | What it is (the first sentence of its doc comment) |\n" +
		"|---|---|\n" +
		"| [`cmd/tool`](../cmd/tool) | Command tool does one thing. |\n" +
		"| [`internal/a`](../internal/a) | Package a splits a\\|b. |\n"
	if got != want {
		t.Errorf("Table:\n%s\nwant:\n%s", got, want)
	}
	// A document at the root links without "../".
	if got := Table(pkgs[:1], "README.md"); !strings.Contains(got, "](cmd/tool)") {
		t.Errorf("Table for README.md: %s", got)
	}
}

func TestSplice(t *testing.T) {
	doc := "# Title\n\nBefore.\n\n" + StartMarker + "\n| old | row |\n" + EndMarker + "\n\nAfter.\n"
	got, err := Splice([]byte(doc), "| new | row |\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "# Title\n\nBefore.\n\n" + StartMarker + "\n| new | row |\n" + EndMarker + "\n\nAfter.\n"
	if string(got) != want {
		t.Errorf("Splice:\n%s\nwant:\n%s", got, want)
	}
	again, err := Splice(got, "| new | row |\n")
	if err != nil || string(again) != want {
		t.Errorf("Splice twice: %q, %v", again, err)
	}
	if d := Diff([]byte(doc), got); d != "- | old | row |\n+ | new | row |" {
		t.Errorf("Diff: %q", d)
	}
}

func TestSpliceRefusesBadMarkers(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"no start", "x\n" + EndMarker + "\n", "no line " + StartMarker},
		{"no end", StartMarker + "\nx\n", "no line " + EndMarker},
		{"two starts", StartMarker + "\n" + StartMarker + "\n" + EndMarker + "\n", "appears 2 times"},
		{"end first", EndMarker + "\n" + StartMarker + "\n", "comes before"},
		{"start not on its own line", "see " + StartMarker + "\n" + EndMarker + "\n", "no line " + StartMarker},
	} {
		_, err := Splice([]byte(tc.doc), "| row |\n")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to say %q", tc.name, err, tc.want)
		}
	}
}

func TestParseList(t *testing.T) {
	root := "/repo"
	out := `{"Dir": "/repo/internal/z", "ImportPath": "m/internal/z", "Name": "z", "Doc": "Package z is last."}
{"Dir": "/repo/cmd/tool", "ImportPath": "m/cmd/tool", "Name": "main", "Doc": "Command tool is first."}`
	pkgs, err := parseList(root, []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 2 || pkgs[0] != (Package{"cmd/tool", "Command tool is first."}) || pkgs[1] != (Package{"internal/z", "Package z is last."}) {
		t.Errorf("parseList = %+v", pkgs)
	}

	bad := `{"Dir": "/repo/internal/a", "ImportPath": "m/internal/a", "Name": "a", "Doc": ""}
{"Dir": "/repo/internal/b", "ImportPath": "m/internal/b", "Name": "b", "Doc": "Helpers for b."}
{"Dir": "/repo/cmd/tool", "ImportPath": "m/cmd/tool", "Name": "main", "Doc": "Package main runs."}`
	_, err = parseList(root, []byte(bad))
	if err == nil {
		t.Fatal("packages without a proper doc comment were accepted")
	}
	for _, want := range []string{"internal/a: no package doc comment", `internal/b: the doc comment should open with "Package b "`, `cmd/tool: the doc comment should open with "Command "`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestGenerateSeesNewPackage runs the real `go list` on a small module:
// a package missing from its map makes Generate's document differ, with
// the row to add, and the regenerated document is stable.
func TestGenerateSeesNewPackage(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	root := t.TempDir()
	write := func(name, text string) {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.21\n")
	write("a/a.go", "// Package a is the first package.\npackage a\n")
	write("a/testdata/x.go", "package ignored\n") // go list skips testdata
	aRow := "| [`a`](../a) | Package a is the first package. |\n"
	header := Table(nil, Doc)
	write(Doc, "# Map\n\n"+StartMarker+"\n"+header+aRow+EndMarker+"\n")

	current, want, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	if string(current) != string(want) {
		t.Fatalf("an up-to-date map differs:\n%s", Diff(current, want))
	}

	write("b/c/c.go", "// Package c is new. It has a second sentence.\npackage c\n")
	current, want, err = Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(current, want); d != "+ | [`b/c`](../b/c) | Package c is new. |" {
		t.Errorf("after adding b/c, Diff = %q", d)
	}
	write(Doc, string(want))
	if current, want, err = Generate(root); err != nil || string(current) != string(want) {
		t.Errorf("the regenerated map is not stable (err %v):\n%s", err, Diff(current, want))
	}

	write("d/d.go", "package d\n")
	if _, _, err := Generate(root); err == nil || !strings.Contains(err.Error(), "d: no package doc comment") {
		t.Errorf("a package without a doc comment: err = %v", err)
	}
}
