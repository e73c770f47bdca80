//go:build linux

package lab

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wireperf/wireperf/internal/lab/impair"
	"github.com/wireperf/wireperf/internal/udpmon"
)

// A UDP sender's GSO batches cross the router whole (UDP segmentation
// offload on the TUN devices, Linux 6.2+), and the emulator still decides
// per datagram: it counts every datagram the sender sent, drops single
// datagrams out of batches, and the writer joins the datagrams that leave
// together.
func TestRouterUDPOffload(t *testing.T) {
	if !kernelAtLeast(6, 2) {
		t.Skip("UDP segmentation offload on TUN devices needs Linux 6.2 or later")
	}
	fwd := impair.Config{Delay: time.Millisecond, Loss: 0.01}
	l := newRouterLab(t, 1500, RouterSpec{AtoB: fwd, BtoA: impair.Config{Delay: time.Millisecond}, RandStart: 11}, nil)
	wpBypassRouterForTCP(t, l)
	a, b := l.Host("a"), l.Host("b")
	port := startServer(t, b)
	s := udpmon.Plan{Count: 5000, Window: 2 << 20}.Spec(1472, 0) // as fast as the sender can: GSO batches
	res := wpRun(t, a, b, port, s, nil)
	sent, got := wpUDPFlow(t, res)
	ab := l.Router().Stats().AtoB
	t.Logf("sent %d (GSO segments %d), received %d, lost %d; router a→b in %d out %d loss %d in %d writes",
		sent.Sent, sent.GSOSegments, got.Received, got.Lost, ab.In, ab.Out, ab.DroppedLoss, ab.Writes)
	// The client's hellos (a datagram every 50 ms until the server
	// answers) cross the router too.
	if ab.In < uint64(sent.Sent) || ab.In > uint64(sent.Sent)+20 {
		t.Errorf("the router counted %d packets for %d datagrams sent: batches were not split per datagram", ab.In, sent.Sent)
	}
	if ab.DroppedLoss == 0 || got.Lost < int64(ab.DroppedLoss) {
		t.Errorf("router dropped %d datagrams, receiver lost %d", ab.DroppedLoss, got.Lost)
	}
	if ab.DroppedQueue != 0 || ab.DroppedLimit != 0 || ab.WriteErrors != 0 || ab.ReadErrors != 0 || ab.Oversize != 0 {
		t.Errorf("unrequested losses: %+v", ab)
	}
	if 2*ab.Writes >= ab.Out {
		t.Errorf("%d writes for %d datagrams: the batches crossed one datagram at a time", ab.Writes, ab.Out)
	}
}

// kernelAtLeast reports whether the running kernel is major.minor or
// later.
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	f := strings.FieldsFunc(unix.ByteSliceToString(u.Release[:]), func(r rune) bool { return r < '0' || r > '9' })
	if len(f) < 2 {
		return false
	}
	ma, _ := strconv.Atoi(f[0])
	mi, _ := strconv.Atoi(f[1])
	return ma > major || ma == major && mi >= minor
}
