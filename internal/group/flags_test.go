package group

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func writeTestFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func flagsConfig(t *testing.T, args ...string) (Config, error) {
	t.Helper()
	f, fs := NewFlags(), pflag.NewFlagSet("group", pflag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return f.Config(context.Background(), fs)
}

// --pair builds each pair with the shared test flags and the default
// port; a file's pairs take its own flags, its key and its start-in.
func TestFlagsConfig(t *testing.T) {
	key := writeTestFile(t, "agent.key", "ctl 4c1f0b3e8a9d27f65e0c1a7b93d4f2e8\n")
	cfg, err := flagsConfig(t, "--pair", "127.0.0.1,127.0.0.2:6000", "--pair", "[::1]:7000,127.0.0.3", "-p", "5300", "-t", "3", "-P", "2", "--agent-key-file", key)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Pairs) != 2 || cfg.Pairs[0].Sender.Port != 5300 || cfg.Pairs[0].Receiver.Port != 6000 || cfg.Pairs[1].Sender.Port != 7000 {
		t.Fatalf("pairs %+v", cfg.Pairs)
	}
	if s := cfg.Pairs[1].Spec; s.Duration != 3*time.Second || s.Streams != 2 {
		t.Errorf("pair spec %+v, want -t 3 -P 2", s)
	}
	if cfg.Cred == nil || cfg.Cred.User != "ctl" || cfg.StartIn != DefaultStartIn || cfg.ClockProbes != DefaultClockProbes {
		t.Errorf("config %+v", cfg)
	}

	file := writeTestFile(t, "group.yaml", "agent-key-file: "+key+"\nstart-in: 5s\ntime: 4s\npairs:\n  - sender: 127.0.0.1\n    receiver: 127.0.0.2\n    parallel: 3\n")
	if cfg, err = flagsConfig(t, "-f", file); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Pairs) != 1 || cfg.StartIn != 5*time.Second || cfg.Cred == nil {
		t.Fatalf("from the file: %+v", cfg)
	}
	if s := cfg.Pairs[0].Spec; s.Duration != 4*time.Second || s.Streams != 3 {
		t.Errorf("the file's pair spec %+v, want time 4s and parallel 3", s)
	}
	// --start-in given on the command line wins over the file's.
	if cfg, err = flagsConfig(t, "-f", file, "--start-in", "1s"); err != nil || cfg.StartIn != time.Second {
		t.Errorf("--start-in over the file: %v, %v", cfg.StartIn, err)
	}
}

func TestFlagsConfigRefuses(t *testing.T) {
	key := writeTestFile(t, "agent.key", "ctl 4c1f0b3e8a9d27f65e0c1a7b93d4f2e8\n")
	file := writeTestFile(t, "group.yaml", "pairs:\n  - sender: 127.0.0.1\n    receiver: 127.0.0.2\n")
	badStart := writeTestFile(t, "bad.yaml", "agent-key-file: "+key+"\nstart-in: forever\npairs:\n  - sender: 127.0.0.1\n    receiver: 127.0.0.2\n")
	pair := []string{"--pair", "127.0.0.1,127.0.0.2"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append([]string{"-f", file}, pair...), "--pair and -f: choose one"},
		{append([]string{"--start-in", "0"}, pair...), "--start-in"},
		{append([]string{"--clock-probes", "0"}, pair...), "--clock-probes 0"},
		{append([]string{"--connect-timeout", "0"}, pair...), "--connect-timeout"},
		{append([]string{"-p", "0"}, pair...), "-p 0"},
		{[]string{"-f", file, "-t", "5", "--agent-key-file", key}, "--time with -f"},
		{[]string{"-f", badStart}, `start-in "forever"`},
		{[]string{"--pair", "127.0.0.1", "--agent-key-file", key}, "SENDER,RECEIVER"},
		{[]string{"--pair", "127.0.0.1,127.0.0.2,127.0.0.3", "--agent-key-file", key}, "SENDER,RECEIVER"},
		{pair, "--agent-key-file"},
		{[]string{"--agent-key-file", key}, "no pairs"},
	} {
		if _, err := flagsConfig(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}
