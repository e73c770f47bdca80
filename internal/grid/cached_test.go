package grid

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// CachedHandler draws the page once a ttl, however many load it at once
// or one after another, and again once the ttl has passed.
func TestCachedHandlerDrawsOnceATTL(t *testing.T) {
	clock := now
	var mu sync.Mutex
	var loads atomic.Int32
	release := make(chan struct{})
	g, _ := meshGrid()
	h := CachedHandler(func(context.Context) (Grid, error) {
		loads.Add(1)
		<-release
		return g, nil
	}, 30*time.Second, func() time.Time { mu.Lock(); defer mu.Unlock(); return clock })
	srv := httptest.NewServer(h)
	defer srv.Close()
	get := func() string {
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Error(err)
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	pages := make([]string, 3)
	var wg sync.WaitGroup
	for i := range pages {
		wg.Go(func() { pages[i] = get() })
	}
	close(release)
	wg.Wait()
	if n := loads.Load(); n != 1 || pages[0] == "" || pages[0] != pages[1] || pages[1] != pages[2] {
		t.Fatalf("three loads at once: drawn %d times, pages of %d, %d, %d bytes", n, len(pages[0]), len(pages[1]), len(pages[2]))
	}
	mu.Lock()
	clock = clock.Add(29 * time.Second)
	mu.Unlock()
	get()
	if n := loads.Load(); n != 1 {
		t.Fatalf("within the ttl: drawn %d times", n)
	}
	mu.Lock()
	clock = clock.Add(time.Second)
	mu.Unlock()
	get()
	if n := loads.Load(); n != 2 {
		t.Fatalf("past the ttl: drawn %d times", n)
	}
}
