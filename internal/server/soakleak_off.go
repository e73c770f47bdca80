//go:build !soakleak

package server

// soakLeak is the soakleak build's deliberate leak (soakleak.go); in a
// normal build it does nothing.
type soakLeak struct{}

func (*soakLeak) note() string { return "" }
func (*soakLeak) add(int64)    {}
