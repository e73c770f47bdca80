package hostmon

import (
	"os"
	"runtime"
)

// portableSystem is what any OS can tell: no kernel release, and Go's names
// for the OS and architecture ("darwin", "arm64") rather than uname's.
func portableSystem() SystemInfo {
	host, _ := os.Hostname() // "" is the honest answer when it fails
	return SystemInfo{Hostname: host, OS: runtime.GOOS, Machine: runtime.GOARCH}
}
