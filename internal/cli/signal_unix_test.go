//go:build unix

package cli

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// A Ctrl-C under lab exec reaches the command twice at once (the terminal
// and lab exec both deliver it). The second must not kill the process
// before it records what it cut short; if it did, this test's own
// process would die here.
//
// The test holds the window open itself (startRunWindow's seam) until the
// second signal has been handled, so a stalled machine cannot close it
// early: the order of events, not a timer, decides the delivery.
func TestSignalDeliveredTwiceIsOne(t *testing.T) {
	windows := make(chan func(), 1)
	r, err := startRunWindow(context.Background(), env{stdout: io.Discard, stderr: io.Discard},
		logOptions{level: "warn", format: "text"}, "", func(stop func()) { windows <- stop })
	if err != nil {
		t.Fatal(err)
	}
	defer r.done()
	kill := func() {
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
	}
	kill()
	select {
	case <-r.ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the run's context was not cancelled by SIGINT")
	}
	// The run has opened its window: it still catches signals, and only
	// this test will close it.
	var closeWindow func()
	select {
	case closeWindow = <-windows:
	case <-time.After(10 * time.Second):
		t.Fatal("the run never opened its window after the first SIGINT")
	}
	marker := make(chan os.Signal, 1)
	signal.Notify(marker, syscall.SIGUSR1)
	defer signal.Stop(marker)
	// The copy a wrapper passes on.
	kill()
	// A SIGUSR1 sent after it is handled after it (the lower signal
	// first): once the marker arrives, the second SIGINT was handled,
	// and had it killed, this process would be gone.
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-marker:
	case <-time.After(10 * time.Second):
		t.Fatal("the marker signal never arrived")
	}
	// The process is alive to reach this line. Closing the window now
	// means a third signal would stop it, which is what a user's second
	// Ctrl-C means; r.done closes it too.
	closeWindow()
}
