package hostmon

import "strings"

// SystemInfo describes the host.
type SystemInfo struct {
	Hostname, OS, Release, Machine string
}

// String is uname -snrm style, "Linux vm 6.18.44 x86_64"; empty parts are left out.
func (s SystemInfo) String() string {
	parts := make([]string, 0, 4)
	for _, p := range []string{s.OS, s.Hostname, s.Release, s.Machine} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}
