//go:build !linux

package session

// threadsShareNetns: only Linux moves a thread into another network
// namespace.
func threadsShareNetns() bool { return true }
