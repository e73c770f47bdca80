package cli

import (
	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/auth/authflags"
	"github.com/wireperf/wireperf/internal/runner"
)

// clientSecurity is a client's key and TLS flags (package authflags); a
// bad one is a usage error.
type clientSecurity struct{ authflags.Client }

func (c *clientSecurity) register(fs *pflag.FlagSet) { c.Register(fs) }

// applyTo puts the key and the TLS settings on a test run's options.
func (c *clientSecurity) applyTo(o *runner.Options, host string) error {
	cred, tc, err := c.Load(host)
	if err != nil {
		return usageError{err}
	}
	o.Auth, o.TLS = cred, tc
	return nil
}
