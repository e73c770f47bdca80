package daemon_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/daemon"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/taskstore"
)

const testToken = "0123456789abcdef0123"

type apiClient struct {
	t      *testing.T
	url    string
	daemon *daemon.Daemon
}

func (c apiClient) do(method, path, body string) (int, http.Header, string) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func apiDaemon(t *testing.T) apiClient {
	dsn := archivetest.Backends(t)["sqlite"]
	d := newDaemon(t, "a", dsn, false, func(c *daemon.Config) { c.Token = testToken })
	t.Cleanup(func() { start(t, d)() })
	srv := httptest.NewServer(d.Mux())
	t.Cleanup(srv.Close)
	return apiClient{t, srv.URL, d}
}

// A task's test line and destination are data: the line a review used
// to run a command as root through the daemon, and every flag that
// names a file, an archive or a key, are refused with a 400 and a JSON
// error naming them, and nothing is stored.
func TestAPIRefusesTestLinesThatAreNotData(t *testing.T) {
	c := apiDaemon(t)
	for _, tc := range []struct{ task, want string }{
		{`"dest_addr":"exec","test":"lab NAME a -- sh -c id>FILE"`, "shell characters"},
		{`"dest_addr":"exec","test":"lab NAME a -- sh -c id"`, "a test starts with client, rr, udpmon, trace, ping or tcp-connect"},
		{`"test":"client --logfile /tmp/wp-x"`, "--logfile: names a file"},
		{`"test":"client --tcpinfo-csv /tmp/wp-x.csv"`, "--tcpinfo-csv: names a file"},
		{`"test":"client --save --db /tmp/wp-x.db"`, "--save"},
		{`"test":"client --auth-key-file /etc/shadow"`, "--auth-key-file"},
		{`"test":"udpmon --save --campaign c"`, "--save"},
		{`"test":"client -B example.net"`, "--bind"},
		{`"test":"client 10.0.0.1"`, "flags only"},
		{`"dest_addr":"-c","test":"client -t 5"`, "dest_addr"},
		{`"dest_addr":"--logfile=/tmp/x","test":"client -t 5"`, "dest_addr"},
		{`"dest_addr":"b:0","test":"client -t 5"`, "dest_addr"},
		{`"dest":"-b","test":"client -t 5"`, "dest"},
	} {
		body := `{"name":"x","source":"a","dest":"b",` + tc.task + `}`
		if strings.Contains(tc.task, `"dest":`) {
			body = `{"name":"x","source":"a",` + tc.task + `}`
		}
		code, _, out := c.do("POST", "/api/tasks", body)
		var e struct{ Error string }
		if code != http.StatusBadRequest || json.Unmarshal([]byte(out), &e) != nil || !strings.Contains(e.Error, tc.want) {
			t.Errorf("%s: %d %s, want 400 with %q", tc.task, code, out, tc.want)
		}
	}
	mesh := "hosts: {a: , b: }\ngroups: {g: {mesh: [a, b]}}\ntests:\n  t: {test: client --tcpinfo-csv /tmp/wp-x.csv}\nschedules:\n  - {group: g, test: t, repeat: 1m}\n"
	if code, _, out := c.do("POST", "/api/schedule", mesh); code != http.StatusBadRequest || !strings.Contains(out, "--tcpinfo-csv") {
		t.Errorf("mesh apply: %d %s", code, out)
	}
	if code, _, out := c.do("GET", "/api/tasks", ""); code != http.StatusOK || strings.TrimSpace(out) != "[]" {
		t.Errorf("something was stored: %d %s", code, out)
	}
}

// What the daemon runs is the test line read again (the archive is
// shared: its rows are data to this host), its flags bound to their
// values, and the destination after "--".
func TestTestArgs(t *testing.T) {
	local := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	tk := &schedule.Task{Dest: "b", DestAddr: "exec", Args: []string{"client", "-t", "5", "-uR"}}
	got, err := daemon.TestArgs(tk, local)
	want := []string{"client", "--time=5", "--udp", "--reverse", "--json", "--", "exec"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%q %v, want %q", got, err, want)
	}
	tk.DestAddr = "[::1]:5299"
	if got, err := daemon.TestArgs(tk, local); err != nil || got[len(got)-1] != "::1" || got[len(got)-4] != "--port=5299" {
		t.Fatalf("%q %v", got, err)
	}
	// Rows written past the checks (by an older version, or straight into
	// a shared database) are refused when they would run.
	for _, bad := range []*schedule.Task{
		{Dest: "b", DestAddr: "exec", Args: []string{"lab", "exec", "x", "a", "--", "sh", "-c", "id"}},
		{Dest: "b", Args: []string{"client", "--logfile", "/tmp/x"}},
		{Dest: "b", Args: []string{"client", "-B", "192.0.2.7"}},
		{Dest: "-c", Args: []string{"client"}},
		{Dest: "b", DestAddr: "b;id", Args: []string{"client"}},
	} {
		if got, err := daemon.TestArgs(bad, local); err == nil {
			t.Errorf("%+v: runs as %q", bad, got)
		}
	}
}

var nextLink = regexp.MustCompile(`^<(/api/schedule\?[^>]+)>; rel="next"$`)

// /api/schedule answers a bounded page whatever the task's repeat and
// the window asked, and its pages follow one another without a gap or a
// repeat.
func TestScheduleIsBounded(t *testing.T) {
	t.Parallel()
	c := apiDaemon(t)
	if code, _, out := c.do("POST", "/api/tasks", `{"name":"fast","source":"a","dest":"b","test":"rr -t 1","class":"background","repeat":"1s"}`); code != http.StatusCreated {
		t.Fatalf("%d %s", code, out)
	}
	if code, _, out := c.do("GET", "/api/schedule?next=300h", ""); code != http.StatusBadRequest || !strings.Contains(out, "over the limit of 168h") {
		t.Fatalf("next=300h: %d %s", code, out)
	}
	if code, _, _ := c.do("GET", "/api/schedule?next=2562047h", ""); code != http.StatusBadRequest {
		t.Fatalf("next=2562047h: %d", code)
	}
	if code, _, _ := c.do("GET", "/api/schedule?limit=100000", ""); code != http.StatusBadRequest {
		t.Fatalf("limit=100000: %d", code)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code, hdr, out := c.do("GET", "/api/schedule?next=168h", "")
	runtime.ReadMemStats(&after)
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, out)
	}
	// Before the bound, this answer was 604,800 runs (some 300 MB).
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 50<<20 {
		t.Fatalf("answering allocated %d MB", grew>>20)
	}
	var page []daemon.RunJSON
	if err := json.Unmarshal([]byte(out), &page); err != nil || len(page) != daemon.DefaultPage {
		t.Fatalf("%d runs, %v; want a page of %d", len(page), err, daemon.DefaultPage)
	}
	seen := map[string]bool{}
	last := page[len(page)-1]
	for _, r := range page {
		seen[r.ID] = true
	}
	for i := 0; i < 2; i++ {
		m := nextLink.FindStringSubmatch(hdr.Get("Link"))
		if m == nil {
			t.Fatalf("page %d: no next link: %q", i, hdr.Get("Link"))
		}
		code, hdr, out = c.do("GET", m[1], "")
		var p []daemon.RunJSON
		if code != http.StatusOK || json.Unmarshal([]byte(out), &p) != nil || len(p) != daemon.DefaultPage {
			t.Fatalf("page %d: %d, %d runs", i+1, code, len(p))
		}
		// One run a second: the next page starts one second after the last.
		if gap := p[0].Planned.Sub(last.Planned); gap != time.Second {
			t.Fatalf("page %d starts %v after the last page's end", i+1, gap)
		}
		for _, r := range p {
			if seen[r.ID] {
				t.Fatalf("run %s on two pages", r.ID)
			}
			seen[r.ID] = true
		}
		last = p[len(p)-1]
	}
	// A short window has no next page.
	code, hdr, out = c.do("GET", "/api/schedule?next=10s", "")
	if code != http.StatusOK || hdr.Get("Link") != "" || strings.Count(out, `"state"`) < 9 {
		t.Fatalf("next=10s: %d %q %d runs", code, hdr.Get("Link"), strings.Count(out, `"state"`))
	}
}

// 2,000 connections that say nothing, and slow bodies, can't hold the
// API: it keeps at most MaxAPIConns open, sheds the silent ones first,
// and a token holder's request is answered meanwhile.
func TestAPIShedsIdleAndSlowConnections(t *testing.T) {
	dsn := archivetest.Backends(t)["sqlite"]
	d := newDaemon(t, "a", dsn, false, func(c *daemon.Config) { c.Token = testToken; c.API = "127.0.0.1:0" })
	defer start(t, d)()
	addr := d.APIAddr().String()
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := 0; i < 2000; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		held = append(held, c)
		if i%10 == 0 { // a slow body: headers, then nothing
			fmt.Fprintf(c, "POST /api/tasks HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
		}
	}
	began := time.Now()
	c := apiClient{t, "http://" + addr, d}
	code, _, out := c.do("GET", "/api/tasks", "")
	took := time.Since(began)
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, out)
	}
	t.Logf("a token holder's request beside 2,000 held connections: answered in %v", took)
	// Without shedding it would wait for the held ones' own deadlines.
	if took >= 5*time.Second {
		t.Fatalf("answered in %v", took)
	}
	// The daemon sheds as it accepts, and some of the 2,000 may still wait
	// in the listen backlog when the request is answered: wait (bounded)
	// until every one has been accepted, then judge. On a slow host the
	// first silent ones reach their header deadline before the last are
	// accepted, so they close by themselves: the cap is judged by the
	// most ever open, and shedding by its count beside those closings.
	n := d.APIConns()
	for deadline := time.Now().Add(20 * time.Second); n.Accepted < 2001 && time.Now().Before(deadline); n = d.APIConns() {
		runtime.Gosched()
	}
	t.Logf("accepted %d, open %d, shed %d, peak %d (cap %d)", n.Accepted, n.Open, n.Shed, n.Peak, daemon.MaxAPIConns)
	if n.Accepted < 2001 || n.Peak != daemon.MaxAPIConns || n.Open > daemon.MaxAPIConns || n.Shed == 0 {
		t.Fatalf("accepted %d, open %d, shed %d, peak %d; want 2001 accepted, a peak at the cap %d and some shed",
			n.Accepted, n.Open, n.Shed, n.Peak, daemon.MaxAPIConns)
	}
	// The shed connections are closed: the oldest reads EOF at once.
	held[1].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := held[1].Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a shed connection: %v", err)
	}
}

// Wrong API tokens from one address are slowed: once its bucket of 10 is
// empty it is answered 429 before its token is looked at.
func TestWrongTokensAreSlowed(t *testing.T) {
	c := apiDaemon(t)
	codes := map[int]int{}
	for range 50 {
		req, _ := http.NewRequest("POST", c.url+"/api/tasks", strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer wrong-token-wrong-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes[resp.StatusCode]++
	}
	if codes[http.StatusUnauthorized] > 12 || codes[http.StatusTooManyRequests] < 38 {
		t.Fatalf("50 wrong tokens at once: %v", codes)
	}
}

// Reads without a token are slowed per address as wrong tokens are:
// after a burst of ReadBurst (on a clock that stands still) an address
// is answered 429, while a token holder and other addresses are served.
func TestTokenlessReadsAreSlowed(t *testing.T) {
	dsn := archivetest.Backends(t)["sqlite"]
	clock := newFakeClock(time.Date(2026, 12, 6, 16, 0, 0, 0, time.UTC))
	d := newDaemon(t, "a", dsn, false, func(c *daemon.Config) { c.Token = testToken; c.Clock = clock })
	t.Cleanup(func() { start(t, d)() })
	mux := d.Mux()
	read := func(addr, token string) int {
		req := httptest.NewRequest("GET", "/api/runs", nil)
		req.RemoteAddr = addr
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec.Code
	}
	for i := range daemon.ReadBurst {
		if code := read("192.0.2.7:1000", ""); code != http.StatusOK {
			t.Fatalf("read %d: %d", i, code)
		}
	}
	if code := read("192.0.2.7:1001", ""); code != http.StatusTooManyRequests {
		t.Fatalf("read past the burst: %d, want 429", code)
	}
	if code := read("192.0.2.7:1002", testToken); code != http.StatusOK {
		t.Fatalf("a token holder at the same address: %d", code)
	}
	if code := read("192.0.2.8:1000", ""); code != http.StatusOK {
		t.Fatalf("another address: %d", code)
	}
	clock.set(clock.Now().Add(time.Second))
	if code := read("192.0.2.7:1003", ""); code != http.StatusOK {
		t.Fatalf("a second later: %d", code)
	}
}

// A failed run's reason is the child's last line: without the token,
// /api/runs and /grid say only "refused by target", "timed out",
// "unreachable" or "failed" (the line told a closed port from a database
// from an HTTP server); with it, /api/runs says it all.
func TestFailureReasonsAreCoarseWithoutTheToken(t *testing.T) {
	for reason, want := range map[string]string{
		"setting up the test with 10.0.0.9:5432: dial tcp 10.0.0.9:5432: connect: connection refused": "refused by target",
		"10.0.0.9:80: not a wireperf or iperf3 server (its greeting was HTTP/1.1 400)":                "refused by target",
		"dial tcp 10.0.0.9:5201: i/o timeout":                                                         "timed out",
		"dial tcp 10.0.0.9:5201: connect: no route to host":                                           "unreachable",
		"exit status 3": "failed",
	} {
		if got := daemon.CoarseReason("failed", reason); got != want {
			t.Errorf("%q: %q, want %q", reason, got, want)
		}
	}
	if got := daemon.CoarseReason("missed", "no slot within the slip of 5m"); got != "no slot within the slip of 5m" {
		t.Errorf("the daemon's own reason: %q", got)
	}
	dsn := archivetest.Backends(t)["sqlite"]
	d := newDaemon(t, "a", dsn, false, func(c *daemon.Config) { c.Token = testToken })
	t.Cleanup(func() { start(t, d)() })
	ctx := t.Context()
	st, err := archive.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sched := taskstore.New(st)
	now := time.Now().UTC().Truncate(time.Second)
	tk := loopTask("tput", "a", "b", 5201, 1, time.Minute, time.Minute, 0)
	tk.Start = now.Add(-time.Hour)
	if _, err := sched.ApplyTasks(ctx, "test", []*schedule.Task{tk}, now); err != nil {
		t.Fatal(err)
	}
	r, _ := tk.At(0)
	sr := taskstore.NewSchedRun(tk, r)
	if _, err := sched.PlanRuns(ctx, []*taskstore.SchedRun{sr}, now); err != nil {
		t.Fatal(err)
	}
	detail := "dial tcp 10.0.0.9:5432: connect: connection refused"
	if ok, err := sched.Transition(ctx, sr.ID, []string{archive.StateScheduled}, archive.StateFailed, detail, now, now.Add(time.Second), now); !ok || err != nil {
		t.Fatalf("transition: %v %v", ok, err)
	}
	srv := httptest.NewServer(d.Mux())
	defer srv.Close()
	for _, token := range []string{"", testToken} {
		req, _ := http.NewRequest("GET", srv.URL+"/api/runs", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var runs []daemon.RunJSON
		err = json.NewDecoder(resp.Body).Decode(&runs)
		resp.Body.Close()
		want := "refused by target"
		if token != "" {
			want = detail
		}
		if err != nil || len(runs) != 1 || runs[0].Reason != want {
			t.Fatalf("token %v: %+v %v, want the reason %q", token != "", runs, err, want)
		}
	}
	if page := string(get(t, d, "/grid")); strings.Contains(page, "5432") || !strings.Contains(page, "refused by target") {
		t.Fatalf("/grid without the token shows the detail, or no reason:\n%.3000s", page)
	}
}
