//go:build !linux

package hostmon

// System describes the host; without uname the kernel release is unknown.
func System() SystemInfo { return portableSystem() }
