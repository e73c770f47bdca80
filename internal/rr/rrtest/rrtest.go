//go:build linux

// Package rrtest helps the impairment-lab tests of internal/rr and
// internal/udpmon: it runs a wireperf server as a process of its own
// inside a lab host. internal/lab/labtest does the work (and says why a
// process of its own); this is its face for a *lab.Host.
package rrtest

import (
	"log/slog"
	"testing"

	"github.com/wireperf/wireperf/internal/lab"
	"github.com/wireperf/wireperf/internal/lab/labtest"
)

// MaybeServe turns the test binary into a wireperf server when it runs as
// the helper process that StartServer starts, and does not return then.
// Call it first in TestMain.
func MaybeServe() { labtest.MaybeServe() }

// StartServer starts a wireperf server in host h, bound to h's address,
// and returns its port. It serves tests until the test ends.
func StartServer(t testing.TB, h *lab.Host) int {
	t.Helper()
	return labtest.StartServer(t, labtest.Host{Name: h.Name, Addr: h.Addr, Command: h.Command})
}

// Quiet is a logger for clients in tests.
func Quiet() *slog.Logger { return labtest.Quiet() }
