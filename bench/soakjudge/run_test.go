package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// soakFiles writes a soak's /proc samples and server log: a second apart
// for secs seconds, tests accepted at 1 every 2 s, with heapPerTest bytes
// of the live heap kept per accepted test.
func soakFiles(secs int, heapPerTest float64) (proc, log string) {
	var p, l strings.Builder
	t0 := time.Date(2026, 12, 6, 16, 0, 0, 0, time.UTC)
	for i := range secs {
		t := t0.Add(time.Duration(i) * time.Second)
		fmt.Fprintf(&p, "%d.%09d %d %d\n", t.Unix(), t.Nanosecond(), 40000+i%7*100, 18+i%3)
		accepted := i / 2
		fmt.Fprintf(&l, `{"time":%q,"level":"INFO","msg":"test finished","peer":"127.0.0.1:1"}`+"\n", t.Format(time.RFC3339Nano))
		fmt.Fprintf(&l, `{"time":%q,"level":"INFO","msg":"server status","goroutines":%d,"accepted":%d,"refused":1,"shed":0,"auth_failed":2,"heap_live_bytes":%.0f,"gc_cycles":%d}`+"\n",
			t.Add(300*time.Millisecond).Format(time.RFC3339Nano), 20+i%5, accepted, 8e6+float64(i%4)*1e5+heapPerTest*float64(accepted), i/3)
	}
	p.WriteString("1765036900.5 41000\n") // cut short as the server stopped
	return p.String(), l.String()
}

func TestJudgeRunFlat(t *testing.T) {
	proc, log := soakFiles(300, 0)
	r, err := parse(strings.NewReader(proc), strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.judge(30, 10)
	if err != nil {
		t.Fatal(err)
	}
	if rep.growing() {
		t.Fatalf("a flat soak judged growing:\n%v", rep)
	}
	if rep.samples != 27 || rep.testsPerHour < 1790 || rep.testsPerHour > 1810 {
		t.Errorf("samples %d, tests per hour %.0f; want 27 and 1800\n%v", rep.samples, rep.testsPerHour, rep)
	}
	out := rep.String()
	for _, want := range []string{"heap live:", "fds:", "goroutines:", "rss:", "server counters: accepted 149, refused 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestJudgeRunLeaking(t *testing.T) {
	proc, log := soakFiles(300, 64e3)
	r, err := parse(strings.NewReader(proc), strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.judge(30, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.growing() || !rep.verdicts[0].Growing {
		t.Fatalf("a soak whose heap keeps 64 KB a test judged flat:\n%v", rep)
	}
}

func TestJudgeRunTooShort(t *testing.T) {
	proc, log := soakFiles(50, 0)
	r, err := parse(strings.NewReader(proc), strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.judge(30, 10); err == nil || !strings.Contains(err.Error(), "run longer") {
		t.Fatalf("a 50-s soak with 30 s of warm-up: err %v, want one saying to run longer", err)
	}
	idle := strings.ReplaceAll(log, `"accepted":`, `"accepted":0,"was":`)
	r, err = parse(strings.NewReader(proc), strings.NewReader(idle))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.judge(10, 10); err == nil || !strings.Contains(err.Error(), "no tests accepted") {
		t.Fatalf("a soak without tests: err %v, want one saying no tests were accepted", err)
	}
	if _, err := parse(strings.NewReader(proc), strings.NewReader("not json\n")); err == nil {
		t.Error("a log without status lines: no error")
	}
}
