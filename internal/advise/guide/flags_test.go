package guide

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func flagsConfig(t *testing.T, args ...string) (Config, error) {
	t.Helper()
	f, fs := NewFlags(), pflag.NewFlagSet("advise", pflag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return f.Config("h")
}

// The flags become the run's settings, the key and the bottleneck
// included; the defaults are the run's own.
func TestFlagsConfig(t *testing.T) {
	key := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(key, []byte("alice 4c1f0b3e8a9d27f65e0c1a7b93d4f2e8\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := flagsConfig(t, "-p", "6000", "-t", "2", "-P", "8", "-R", "--bottleneck", "1g", "--probes", "3", "--auth-key-file", key)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "h" || cfg.Port != 6000 || cfg.Duration != 2*time.Second || cfg.Streams != 8 || !cfg.Reverse ||
		cfg.Bottleneck != 1e9 || cfg.Probes != 3 || cfg.Auth == nil || cfg.Auth.User != "alice" || cfg.TLS != nil {
		t.Errorf("config %+v", cfg)
	}
	if cfg, err = flagsConfig(t); err != nil || cfg.Streams != DefaultStreams || cfg.Probes != DefaultProbes || cfg.Bottleneck != 0 || cfg.Auth != nil {
		t.Errorf("defaults: %+v, %v", cfg, err)
	}
}

func TestFlagsConfigRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-p", "0"}, "-p 0"},
		{[]string{"-t", "0.1"}, "-t 100ms"},
		{[]string{"-P", "1"}, "-P 1"},
		{[]string{"--probes", "101"}, "--probes 101"},
		{[]string{"--connect-timeout", "0"}, "--connect-timeout"},
		{[]string{"--bottleneck", "fast"}, "--bottleneck"},
		{[]string{"--tls-pin", "ab"}, "--tls-pin"},
	} {
		if _, err := flagsConfig(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}
