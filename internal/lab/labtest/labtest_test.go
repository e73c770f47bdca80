//go:build unix

package labtest_test

import (
	"context"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/lab/labtest"
)

// here is a Host without a namespace: the helpers run on loopback, so
// that these tests need no privileges.
var here = labtest.Host{
	Name: "here",
	Addr: netip.MustParseAddr("127.0.0.1"),
	Command: func(ctx context.Context, name string, args ...string) *exec.Cmd {
		return exec.CommandContext(ctx, name, args...)
	},
}

const helperEnv = "WIREPERF_LABTEST_HELPER"

// TestMain lets the test binary be StartServer's server.
func TestMain(m *testing.M) {
	labtest.MaybeServe()
	os.Exit(m.Run())
}

// TestHelper is not a test: TestStartWaitOutput runs it as a helper.
func TestHelper(t *testing.T) {
	switch os.Getenv(helperEnv) {
	case "":
		t.Skip("helper process for TestStartWaitOutput")
	case "fail":
		t.Fatal("helper fails on purpose")
	case "hang":
		time.Sleep(time.Minute) // load generator: the helper's work is to hang until its parent kills it
	}
}

func TestStartWaitOutput(t *testing.T) {
	p := labtest.Start(t, here, []string{helperEnv + "=fail"}, "-test.run=^TestHelper$", "-test.v")
	exited, err := p.Wait(30 * time.Second)
	if !exited || err == nil {
		t.Fatalf("failing helper: exited %v, err %v", exited, err)
	}
	if !strings.Contains(p.Output(), "helper fails on purpose") {
		t.Errorf("output lacks the helper's message:\n%s", p.Output())
	}

	p = labtest.Start(t, here, []string{helperEnv + "=hang"}, "-test.run=^TestHelper$")
	if exited, _ := p.Wait(100 * time.Millisecond); exited {
		t.Fatalf("hanging helper exited:\n%s", p.Output())
	}
	start := time.Now()
	p.Stop()
	if exited, _ := p.Wait(0); !exited {
		t.Fatal("Stop returned before the helper exited")
	}
	t.Logf("stopped the hanging helper in %v", time.Since(start).Round(time.Millisecond))
	p.Stop() // a second Stop is harmless
}

func TestStartServer(t *testing.T) {
	port := labtest.StartServer(t, here)
	c, err := net.DialTimeout("tcp", net.JoinHostPort(here.Addr.String(), strconv.Itoa(port)), 5*time.Second)
	if err != nil {
		t.Fatalf("the server does not listen on its port %d: %v", port, err)
	}
	c.Close()
}
