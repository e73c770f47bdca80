//go:build !linux

package trace

import (
	"errors"
	"net/netip"
	"runtime"
)

func newProber(netip.Addr, Config) (prober, error) {
	return nil, errors.New("trace: path tracing runs on Linux only, not " + runtime.GOOS)
}
