package chromium

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A page that logs an error, throws, and asks another host for an image
// has each of these recorded; the page's own request is not.
func TestProblemsAreHeard(t *testing.T) {
	var other string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		// Another loopback address, on which the server does not listen:
		// the request is refused, and nothing leaves the host.
		w.Write([]byte(`<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body>
<img src="` + other + `" alt="">
<script>console.error("boom"); throw new Error("thrown");</script></body></html>`))
	}))
	_, port, _ := strings.Cut(srv.Listener.Addr().String(), ":")
	other = "http://127.0.0.2:" + port + "/other.png"
	srv.Start()
	t.Cleanup(srv.Close)
	b := Start(t, 400, 300, 60*time.Second, func(u string) bool { return u == srv.URL+"/" || strings.HasPrefix(u, "data:") })
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitReady("body")); err != nil {
		t.Fatal(err)
	}
	want := []string{`console error: "boom"`, "exception: Uncaught", "request to " + other}
	if _, err := chromedp.Run(b.Ctx, chromedp.Poll[bool](`document.images[0].complete`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(b.Problems(), "\n")
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("problems\n%s\nlack %q", got, w)
		}
	}
	if strings.Contains(got, "request to "+srv.URL+"/\n") || strings.Contains(got, "no network request heard") {
		t.Errorf("the page's own request is taken for a problem:\n%s", got)
	}
}
