package loopserver

import (
	"net"
	"testing"

	"go.uber.org/goleak"

	"github.com/wireperf/wireperf/internal/server"
)

// The server listens on loopback with the configuration asked for, and
// the test's cleanup stops it with nothing left running.
func TestStart(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Run("serve", func(t *testing.T) {
		var got server.Config
		srv := Start(t, func(c *server.Config) { c.Limits.MaxTests = 3; got = *c })
		if got.Bind != "127.0.0.1" || got.Limits.MaxTests != 3 || got.Logger == nil {
			t.Errorf("configured %+v", got)
		}
		if a := srv.Addr(); a == nil || !a.IP.IsLoopback() || a.Port == 0 {
			t.Fatalf("listening on %v", a)
		}
		conn, err := net.Dial("tcp", srv.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.Close()
	})
}
