//go:build !unix

package pgbouncer

import "errors"

// ErrNotInstalled: pgbouncer is run only on Unix here.
var ErrNotInstalled = errors.New("pgbouncer: run only on Unix")

// ErrRoot is Unix's.
var ErrRoot = errors.New("pgbouncer refuses root")

// Options size the pooler.
type Options struct{ PoolSize, MaxClients int }

// Bouncer is a running pgbouncer.
type Bouncer struct {
	DSN string
	PID int
}

// Start fails off Unix.
func Start(string, Options) (*Bouncer, error) { return nil, ErrNotInstalled }

// Stop does nothing.
func (*Bouncer) Stop() {}
