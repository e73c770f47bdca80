package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/testline"
)

// Every flag of the commands a test line can name is either allowed by
// package testline, written the same way, or refused with a reason. The
// commands register their flags from the declarations testline reads
// (testflags.Register refuses any other), so this holds by construction:
// the test catches a flag added to a command's set around them.
func TestTestLineFlagsMatchCommands(t *testing.T) {
	root := newRoot(env{stdout: io.Discard, stderr: io.Discard})
	for _, name := range testline.Commands {
		c, _, err := root.Find([]string{name})
		if err != nil || c.Name() != name {
			t.Fatalf("%s: no such command", name)
		}
		allowed := testline.Allowed(name)
		seen := map[string]bool{}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			seen[f.Name] = true
			spec, ok := allowed[f.Name]
			if !ok {
				if _, refused := testline.Refused(f.Name); !refused {
					t.Errorf("%s --%s: neither allowed nor refused in a test line", name, f.Name)
				}
				return
			}
			if spec.Short != f.Shorthand {
				t.Errorf("%s --%s: shorthand %q in testline, %q in the command", name, f.Name, spec.Short, f.Shorthand)
			}
			if isBool := f.Value.Type() == "bool"; spec.Bool != isBool {
				t.Errorf("%s --%s: boolean %v in testline, %v in the command", name, f.Name, spec.Bool, isBool)
			}
		})
		for f := range allowed {
			if !seen[f] {
				t.Errorf("%s --%s: allowed in a test line but not a flag of the command", name, f)
			}
		}
	}
}

// The attack a review made through a task (a destination that picked
// the lab's exec subcommand) and the file-naming flags are refused where
// tasks and mesh files are checked.
func TestTestLinesRefuseCommandLineFlags(t *testing.T) {
	for _, line := range []string{
		"lab NAME a -- sh -c id",
		"client --logfile /tmp/x",
		"client --tcpinfo-csv /tmp/x.csv",
		"client --save --db /tmp/x.db",
		"client --auth-key-file /etc/shadow",
		"client -B host.example",
		"rr --logfile /tmp/x",
		"udpmon --save",
	} {
		if _, err := measure.ParseLine(strings.Fields(line)); err == nil {
			t.Errorf("%s: accepted", line)
		}
	}
	for _, line := range []string{"client -t 10 -P 4 -O 2", "rr --sizes 64,1472 -t 2", "udpmon --spacing 0:40us:1us --count 1000",
		"client -u --isochronous=60:20m,5m --ipg 0.05 -t 2", "client -u --isochronous -t 2"} {
		if _, err := measure.ParseLine(strings.Fields(line)); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
	// Values the allow-list passes still meet the command's own checks.
	if _, err := measure.ParseLine(strings.Fields("client -t five")); err == nil {
		t.Error("client -t five: accepted")
	}
}

// `task add` and `mesh apply` refuse the same lines, with one line and
// the usage exit code, and store nothing.
func TestTaskAndMeshRefuseLinesThatAreNotData(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	for _, c := range []struct{ addr, test, want string }{
		{"exec", "lab NAME a -- sh -c id>FILE", "shell characters"},
		{"b", "client --logfile /tmp/wp-x", "--logfile"},
		{"b", "client --tcpinfo-csv /tmp/wp-x.csv", "--tcpinfo-csv"},
		{"b", "client --save --db /tmp/wp-x.db", "--save"},
		{"b", "client --auth-key-file /etc/shadow", "--auth-key-file"},
		{"-c", "client -t 5", "dest_addr"},
	} {
		code, _, errOut := runCLI("task", "add", "--name", "x", "--source", "a", "--dest", "b", "--addr", c.addr, "--test", c.test, "--db", db)
		if code != ExitUsage || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("task add --test %q: %d %q", c.test, code, errOut)
		}
	}
	f := filepath.Join(t.TempDir(), "m.yaml")
	os.WriteFile(f, []byte("hosts: {a: , b: }\ngroups: {g: {mesh: [a, b]}}\ntests:\n  t: {test: client --logfile /tmp/wp-x}\nschedules:\n  - {group: g, test: t, repeat: 1m}\n"), 0o644)
	if code, _, errOut := runCLI("mesh", "apply", "-f", f, "--db", db); code != ExitUsage || !strings.Contains(errOut, "--logfile") {
		t.Errorf("mesh apply: %d %q", code, errOut)
	}
	// Nothing was stored: not even the archive was created.
	if code, _, errOut := runCLI("task", "list", "--db", db); code != ExitUsage || !strings.Contains(errOut, "no such file") {
		t.Errorf("list: %d %q", code, errOut)
	}
}
