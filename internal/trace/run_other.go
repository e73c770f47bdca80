//go:build !linux

package trace

import (
	"context"
	"errors"
	"net/netip"
	"runtime"
)

func run(context.Context, netip.Addr, Config, *Report) error {
	return errors.New("trace: path tracing runs on Linux only, not " + runtime.GOOS)
}
