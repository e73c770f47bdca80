package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMeshApplyIdempotentAndBadInputAppliesNothing(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	code, out, errOut := runCLI("mesh", "apply", "-f", "../../examples/mesh-3hosts.yaml", "--db", db)
	if code != ExitOK || !strings.Contains(out, "10 added") {
		t.Fatalf("first apply: %d %q %q", code, out, errOut)
	}
	code, out, _ = runCLI("mesh", "apply", "-f", "../../examples/mesh-3hosts.yaml", "--db", db)
	if code != ExitOK || !strings.Contains(out, "0 added, 0 updated, 10 unchanged, 0 removed") {
		t.Fatalf("second apply: %d %q", code, out)
	}
	// A file with a bad test line (a flag the client does not have):
	// one line naming file, line and key, exit 2, nothing applied.
	data, _ := os.ReadFile("../../examples/mesh-3hosts.yaml")
	bad := strings.Replace(string(data), "test: client -t 10 -P 4", "test: client -t 10 --frobnicate", 1)
	bad = strings.Replace(bad, "repeat: 5m", "repeat: 7m", 1)
	badFile := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(badFile, []byte(bad), 0o644)
	code, _, errOut = runCLI("mesh", "apply", "-f", badFile, "--db", db)
	line := 1 + strings.Count(bad[:strings.Index(bad, "--frobnicate")], "\n")
	if code != ExitUsage || strings.Count(strings.TrimSpace(errOut), "\n") != 0 ||
		!strings.Contains(errOut, badFile+":") || !strings.Contains(errOut, "tests.tput.test") || !strings.Contains(errOut, "frobnicate") ||
		!strings.Contains(errOut, fmt.Sprintf(":%d:", line)) {
		t.Fatalf("bad test line: %d %q (want line %d)", code, errOut, line)
	}
	code, out, _ = runCLI("task", "list", "--db", db)
	if code != ExitOK || strings.Count(out, "\n") != 11 || strings.Contains(out, "7m") {
		t.Fatalf("after a bad apply: %d\n%s", code, out)
	}
	for _, c := range []struct {
		name, src, key string
	}{
		{"unknown host", "hosts: {a: , b: }\ngroups:\n  g: {mesh: [a, c]}\n", "groups.g"},
		{"cycle", "hosts: {a: , b: }\ngroups:\n  g: {mesh: [a, h]}\n  h: {mesh: [b, g]}\n", "groups.h"},
	} {
		f := filepath.Join(t.TempDir(), "m.yaml")
		os.WriteFile(f, []byte(c.src), 0o644)
		code, _, errOut := runCLI("mesh", "apply", "-f", f, "--db", db)
		if code != ExitUsage || !strings.Contains(errOut, c.key) || !strings.HasPrefix(errOut, "wireperf: "+f+":") {
			t.Fatalf("%s: %d %q", c.name, code, errOut)
		}
	}
}

func TestTaskCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	code, out, errOut := runCLI("task", "add", "--name", "tput", "--source", "a", "--dest", "b", "--addr", "192.0.2.1:5201",
		"--test", "client -t 5", "--repeat", "10m", "--slip", "1m", "--db", db)
	if code != ExitOK || !strings.Contains(out, "added") {
		t.Fatalf("add: %d %q %q", code, out, errOut)
	}
	id := strings.Fields(out)[1]
	if code, _, errOut := runCLI("task", "add", "--name", "x", "--source", "a", "--dest", "b", "--test", "rr --nonsense", "--db", db); code != ExitUsage || !strings.Contains(errOut, "nonsense") {
		t.Fatalf("bad test: %d %q", code, errOut)
	}
	if code, _, _ := runCLI("task", "pause", id, "--db", db); code != ExitOK {
		t.Fatal("pause")
	}
	code, out, _ = runCLI("task", "list", "--db", db)
	if code != ExitOK || !strings.Contains(out, "paused") || !strings.Contains(out, "client -t 5") {
		t.Fatalf("list: %q", out)
	}
	runCLI("task", "resume", id, "--db", db)
	code, out, _ = runCLI("schedule", "--host", "b", "--next", "1h", "--db", db)
	if code != ExitOK || !strings.Contains(out, "\nb |") || strings.Count(out, "← a") != 6 {
		t.Fatalf("schedule: %d\n%s", code, out)
	}
	if code, _, _ := runCLI("task", "rm", id, "--db", db); code != ExitOK {
		t.Fatal("rm")
	}
	if code, _, errOut := runCLI("task", "rm", id, "--db", db); code != ExitUsage || !strings.Contains(errOut, "not found") {
		t.Fatalf("rm twice: %d %q", code, errOut)
	}
	if code, _, _ := runCLI("daemon", "--db", db); code != ExitUsage {
		t.Fatal("daemon without --config")
	}
}

func TestMeshApplyTakesItsFileEitherWay(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	code, out, errOut := runCLI("mesh", "apply", "../../examples/mesh-3hosts.yaml", "--db", db)
	if code != ExitOK || !strings.Contains(out, "10 added") {
		t.Fatalf("mesh apply FILE: %d %q %q", code, out, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mesh"}, "wireperf: mesh needs a command: wireperf mesh apply -f FILE, or wireperf mesh import --psconfig FILE\n"},
		{[]string{"mesh", "apply", "--db", db}, "wireperf: mesh apply needs the mesh file: -f FILE\n"},
		{[]string{"mesh", "apply", "a.yaml", "b.yaml", "--db", db}, "wireperf: mesh apply takes one mesh file, got 2 arguments\n"},
		{[]string{"mesh", "apply", "-f", "a.yaml", "b.yaml", "--db", db}, "wireperf: mesh apply: two mesh files, -f a.yaml and b.yaml; give one\n"},
	} {
		if code, _, errOut := runCLI(c.args...); code != ExitUsage || errOut != c.want {
			t.Errorf("%q: exit %d, %q; want exit 2, %q", c.args, code, errOut, c.want)
		}
	}
}
