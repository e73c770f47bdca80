// Package chromium opens pages in a headless chromium for tests and
// records what would be wrong with them: console errors, uncaught
// exceptions, and requests beyond what the page may load. Only tests
// import it.
package chromium

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Path is where Debian's chromium package installs the browser.
const Path = "/usr/bin/chromium"

// Browser is one headless chromium, for one test.
type Browser struct {
	// Ctx is the browser's first tab, with the time limit Start was given.
	Ctx context.Context

	mu       sync.Mutex
	problems []string
	requests int
}

// Start opens a headless chromium of the given window size, closed when
// the test ends, or skips the test when chromium is not installed.
// ownRequest tells the page's own requests from those it must not make;
// every other request is a problem. Everything is bounded by limit.
func Start(t *testing.T, width, height int, limit time.Duration, ownRequest func(url string) bool) *Browser {
	t.Helper()
	if _, err := os.Stat(Path); err != nil {
		t.Skipf("chromium is not installed at %s (apt-get install chromium): the browser test needs it", Path)
	}
	b := &Browser{}
	listener := func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, fmt.Sprint(a.Value)+a.Description)
				}
				b.add("console " + string(ev.Type) + ": " + strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			b.add(fmt.Sprintf("exception: %s at %d:%d", ev.ExceptionDetails.Text, ev.ExceptionDetails.LineNumber, ev.ExceptionDetails.ColumnNumber))
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError {
				b.add("log error: " + ev.Entry.Text + " " + ev.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			b.mu.Lock()
			b.requests++
			b.mu.Unlock()
			if u := ev.Request.URL; !ownRequest(u) {
				b.add("request to " + u)
			}
		}
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(listener))
	t.Cleanup(cancel)
	// The first call starts the browser, on a context without a deadline.
	if _, err := chromedp.Call(bctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	ctx, cancelTime := context.WithTimeout(bctx, limit)
	t.Cleanup(cancelTime)
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	b.Ctx = ctx
	return b
}

func (b *Browser) add(s string) {
	b.mu.Lock()
	b.problems = append(b.problems, s)
	b.mu.Unlock()
}

// Problems are what was wrong so far, and that no request was heard at
// all when none was: then the listener heard nothing.
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := slices.Clone(b.problems)
	if b.requests == 0 {
		out = append(out, "no network request heard, not even the page's own")
	}
	return out
}

// Check fails the test for every problem.
func (b *Browser) Check(t *testing.T) {
	t.Helper()
	for _, p := range b.Problems() {
		t.Error(p)
	}
}

// SaveScreenshot writes a PNG to the test's temp dir as name, and also
// to the file the environment variable env names, when it is set.
func SaveScreenshot(t *testing.T, png []byte, name, env string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", p, len(png))
	if out := os.Getenv(env); out != "" {
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Error(err)
		}
	}
}
