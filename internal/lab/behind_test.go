package lab

import (
	"strings"
	"testing"
	"time"
)

func TestBehindLine(t *testing.T) {
	// 40 ms lost of 10 s is 0.4%: within what a row reads under capacity.
	if s := behindLine("wan", Lateness{LostUs: 1000}, Lateness{LostUs: 41000, Packets: 900}, 10*time.Second); s != "" {
		t.Errorf("0.4%% of the output lost: %q", s)
	}
	s := behindLine("wan", Lateness{Packets: 5, LostUs: 1000}, Lateness{Packets: 1205, MaxUs: 52300, LostUs: 101000}, 10*time.Second)
	for _, want := range []string{`lab "wan"`, "idle 100 ms of the test's 10.0 s (1.0%)", "1200 packets left more than 1 ms late", "limited this test"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
	var w *RouterWatch
	if w.Behind(time.Now(), 0) != "" {
		t.Error("a nil watch said something")
	}
}
