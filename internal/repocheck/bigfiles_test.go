package repocheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxTrackedFile is the size above which a tracked file must be one that
// bigFiles allows: a build's output (a 36 MB mesh-scale binary once) or a
// dump committed by mistake makes every clone pay for it forever.
const maxTrackedFile = 1 << 20

// bigFiles are the tracked files allowed over maxTrackedFile, each with
// why it is there: a fixture a test reads, or an image a document shows,
// that cannot be smaller. None is, today.
var bigFiles = map[string]string{}

// TestNoBigTrackedFiles: every file git tracks is at most maxTrackedFile
// bytes or listed in bigFiles; every row of bigFiles is a tracked file
// over the limit, so the list stays the truth.
func TestNoBigTrackedFiles(t *testing.T) {
	root := repoRoot(t)
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("git ls-files: %v: %s (the tracked files are git's: this check needs git and a checkout)", err, strings.TrimSpace(stderr.String()))
	}
	big := map[string]int64{}
	var tracked int
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		tracked++
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		if fi.Size() > maxTrackedFile {
			big[name] = fi.Size()
		}
	}
	if tracked == 0 {
		t.Fatal("git ls-files listed no file")
	}
	var names []string
	for name := range big {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, ok := bigFiles[name]; !ok {
			t.Errorf("%s: %d bytes tracked, over %d: a build's output belongs in .gitignore; a fixture or an image that must be this big goes in bigFiles with the reason", name, big[name], maxTrackedFile)
		}
	}
	for name, why := range bigFiles {
		if _, ok := big[name]; !ok {
			t.Errorf("bigFiles lists %s (%s), which is no tracked file over %d bytes: delete its row", name, why, maxTrackedFile)
		}
	}
	t.Logf("%d tracked files, %d over %d bytes", tracked, len(big), maxTrackedFile)
}

// TestGitignoreCoversCommands: `go build ./path/to/cmd` writes the
// command's binary into the repository's root under the directory's
// name; .gitignore ignores each, so that none is committed by mistake.
func TestGitignoreCoversCommands(t *testing.T) {
	root := repoRoot(t)
	ignore, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(string(ignore), "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	commands := 0
	for _, p := range modulePackages(t, root) {
		if !strings.HasPrefix(p.Synopsis, "Command ") {
			continue
		}
		commands++
		if want := "/" + filepath.Base(p.Path); !lines[want] {
			t.Errorf(".gitignore lacks %s, the binary `go build ./%s` leaves in the root", want, p.Path)
		}
	}
	if commands == 0 {
		t.Fatal("no command among the module's packages")
	}
}
