package iperf3bin

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPathFollowsTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "iperf3-newest")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(Env, exe)
	if got := Path(); got != exe {
		t.Errorf("with %s=%s, Path() = %q", Env, exe, got)
	}
	plain := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(Env, plain)
	if got := Path(); got != "" {
		t.Errorf("with %s naming a file that is not executable, Path() = %q, want none", Env, got)
	}
	t.Setenv(Env, "")
	t.Setenv("PATH", dir)
	if got := Path(); got != "" {
		t.Errorf("with no iperf3 on PATH, Path() = %q, want none", got)
	}
	if err := os.Rename(exe, filepath.Join(dir, "iperf3")); err != nil {
		t.Fatal(err)
	}
	if got, want := Path(), filepath.Join(dir, "iperf3"); got != want {
		t.Errorf("with iperf3 on PATH, Path() = %q, want %q", got, want)
	}
}
