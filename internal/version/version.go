// Package version names this build: its release, the commit it was built from, and whether
// that tree had changes not committed.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version, Commit and Modified are set at link time by `make dist`, `make deb` and `make rpm`
// (-ldflags "-X .../version.Version=0.1.0 -X .../version.Commit=HASH -X .../version.Modified=false"),
// so that a build from a source archive without .git still says what it is. Otherwise they come
// from the module's build information (the go command's vcs.* settings).
var (
	Version  = ""
	Commit   = ""
	Modified = ""
)

// Info is what `wireperf version` reports.
type Info struct {
	Release  string `json:"release"`  // "dev" when neither the linker nor the module names one
	Commit   string `json:"commit"`   // full hash; "" when unknown
	Modified bool   `json:"modified"` // the tree had uncommitted changes to tracked files
	// ModifiedKnown is false when neither the linker nor the go command recorded the tree's state.
	ModifiedKnown bool   `json:"-"`
	CommitTime    string `json:"commit_time,omitempty"` // RFC 3339, from vcs.time
	Go            string `json:"go"`
	Platform      string `json:"platform"`
}

// Get returns this build's Info.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return info(Version, Commit, Modified, bi, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

// info merges what the linker set with the build information; the linker's values win, since
// they are what the release was built as.
func info(release, commit, modified string, bi *debug.BuildInfo, goVersion, platform string) Info {
	in := Info{Release: release, Commit: commit, Go: goVersion, Platform: platform}
	switch modified {
	case "true":
		in.Modified, in.ModifiedKnown = true, true
	case "false":
		in.ModifiedKnown = true
	}
	if bi != nil {
		if in.Release == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			in.Release = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if in.Commit == "" {
					in.Commit = s.Value
				}
			case "vcs.modified":
				if !in.ModifiedKnown {
					in.Modified, in.ModifiedKnown = s.Value == "true", true
				}
			case "vcs.time":
				in.CommitTime = s.Value
			}
		}
	}
	if in.Release == "" {
		in.Release = "dev"
	}
	return in
}

// String is the version to show and to send to peers: the release alone.
func String() string { return Get().Release }

// Long is the one line `wireperf version` prints, e.g.
// "wireperf 0.1.0 (commit 38d3e3b1f0c2, clean tree) go1.26.8 linux/amd64".
func (in Info) Long() string {
	commit := "commit unknown"
	if in.Commit != "" {
		c := in.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		commit = "commit " + c
	}
	tree := "tree state unknown"
	if in.ModifiedKnown {
		tree = "clean tree"
		if in.Modified {
			tree = "modified tree"
		}
	}
	return fmt.Sprintf("wireperf %s (%s, %s) %s %s", in.Release, commit, tree, in.Go, in.Platform)
}
