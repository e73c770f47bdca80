package version

import (
	"runtime/debug"
	"testing"
)

func buildInfo(main string, settings ...string) *debug.BuildInfo {
	bi := &debug.BuildInfo{Main: debug.Module{Version: main}}
	for i := 0; i+1 < len(settings); i += 2 {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return bi
}

func TestInfoPrefersTheLinkersValues(t *testing.T) {
	bi := buildInfo("(devel)", "vcs.revision", "aaaaaaaaaaaaaaaaaaaa", "vcs.modified", "true", "vcs.time", "2026-12-06T15:00:00Z")
	in := info("0.1.0", "bbbbbbbbbbbbbbbbbbbb", "false", bi, "go1.26.8", "linux/amd64")
	if in.Release != "0.1.0" || in.Commit != "bbbbbbbbbbbbbbbbbbbb" || in.Modified || !in.ModifiedKnown {
		t.Fatalf("linker values lost: %+v", in)
	}
	if in.CommitTime != "2026-12-06T15:00:00Z" {
		t.Errorf("commit time %q", in.CommitTime)
	}
	if got, want := in.Long(), "wireperf 0.1.0 (commit bbbbbbbbbbbb, clean tree) go1.26.8 linux/amd64"; got != want {
		t.Errorf("Long() = %q, want %q", got, want)
	}
}

func TestInfoFallsBackToBuildInfo(t *testing.T) {
	bi := buildInfo("(devel)", "vcs.revision", "0123456789abcdef", "vcs.modified", "true")
	in := info("", "", "", bi, "go1.26.8", "linux/arm64")
	if in.Release != "dev" || in.Commit != "0123456789abcdef" || !in.Modified || !in.ModifiedKnown {
		t.Fatalf("build info not used: %+v", in)
	}
	if got, want := in.Long(), "wireperf dev (commit 0123456789ab, modified tree) go1.26.8 linux/arm64"; got != want {
		t.Errorf("Long() = %q, want %q", got, want)
	}
	if in := info("", "", "", buildInfo("v1.2.3"), "go", "p"); in.Release != "v1.2.3" {
		t.Errorf("module version not used: %+v", in)
	}
}

func TestInfoSaysWhatItDoesNotKnow(t *testing.T) {
	in := info("", "", "", nil, "go1.26.8", "linux/amd64")
	if got, want := in.Long(), "wireperf dev (commit unknown, tree state unknown) go1.26.8 linux/amd64"; got != want {
		t.Errorf("Long() = %q, want %q", got, want)
	}
}
