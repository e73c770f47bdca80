package cli

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every command people can run has a man page, and groff reads each
// without a warning (with -k: the pages are UTF-8, as man reads them).
func TestManPagesBuild(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := runCLI("man", dir)
	if code != ExitOK || !strings.Contains(out, dir) {
		t.Fatalf("man: exit %d: %s %s", code, out, stderr)
	}
	var pages []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		pages = append(pages, strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(env{stdout: io.Discard, stderr: io.Discard}))
	if len(pages) < 10 {
		t.Fatalf("only %d commands: %v", len(pages), pages)
	}
	groff, _ := exec.LookPath("groff")
	for _, name := range pages {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("no page for a command: %v", err)
			continue
		}
		page := string(b)
		if !strings.Contains(page, `.TH "WIREPERF" "1"`) || !strings.Contains(page, ".SH NAME") || !strings.Contains(page, ".SH SYNOPSIS") {
			t.Errorf("%s is not a man page:\n%.300s", name, page)
		}
		if groff == "" {
			continue
		}
		cmd := exec.Command(groff, "-k", "-man", "-Tutf8", "-ww", "-z", filepath.Join(dir, name))
		var warn bytes.Buffer
		cmd.Stderr = &warn
		if err := cmd.Run(); err != nil || warn.Len() > 0 {
			t.Errorf("groff on %s: %v %s", name, err, warn.String())
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "wireperf-client.1"))
	if !strings.Contains(string(b), `\fB--time\fP=10s`) {
		t.Errorf("wireperf-client.1 lacks -t and its default:\n%s", b)
	}
	for _, args := range [][]string{{"man"}, {"man", dir, "extra"}} {
		if code, _, stderr := runCLI(args...); code != ExitUsage || !strings.Contains(stderr, "wireperf man DIR") {
			t.Errorf("%q: exit %d, %q; want %d and how to call it", args, code, stderr, ExitUsage)
		}
	}
}

// The completion scripts for each shell build, and the shells that are
// installed here parse them.
func TestCompletionsBuild(t *testing.T) {
	check := map[string][]string{"bash": {"bash", "-n"}, "zsh": {"zsh", "-n"}, "fish": {"fish", "--no-execute"}}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, out, stderr := runCLI("completion", shell)
		if code != ExitOK || len(out) < 500 || !strings.Contains(out, "wireperf") {
			t.Errorf("completion %s: exit %d, %d bytes: %s", shell, code, len(out), stderr)
			continue
		}
		argv := check[shell]
		if argv == nil {
			continue
		}
		if _, err := exec.LookPath(argv[0]); err != nil {
			t.Logf("%s is not installed: its script is not parsed", argv[0])
			continue
		}
		script := filepath.Join(t.TempDir(), "wireperf."+shell)
		if err := os.WriteFile(script, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err := exec.Command(argv[0], append(argv[1:], script)...).CombinedOutput(); err != nil {
			t.Errorf("%s does not parse its completion script: %v\n%s", shell, err, b)
		}
	}
	// The completion itself: the subcommands after "wireperf ".
	code, out, _ := runCLI("__complete", "")
	for _, want := range []string{"client", "server", "udpmon", "lab"} {
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("completing \"wireperf \": exit %d, no %q in %q", code, want, out)
		}
	}
}
