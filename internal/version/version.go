// Package version names this build.
package version

import "runtime/debug"

// Version is set at link time (-ldflags "-X ...version.Version=v1.2.3");
// otherwise it comes from the module's build information.
var Version = ""

// String is the version to show and to send to peers.
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
