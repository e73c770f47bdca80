package lab

import (
	"strings"
	"testing"
	"time"
)

func TestBehindLine(t *testing.T) {
	if s := behindLine("wan", Lateness{Packets: 5}, Lateness{Packets: 5, MaxUs: 9000}); s != "" {
		t.Errorf("no new late packets: %q", s)
	}
	s := behindLine("wan", Lateness{Packets: 5}, Lateness{Packets: 1205, MaxUs: 52300})
	for _, want := range []string{`lab "wan"`, "1200 packets left more than 1 ms late", "52.3 ms", "limited this test"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
	var w *RouterWatch
	if w.Behind(time.Now(), 0) != "" {
		t.Error("a nil watch said something")
	}
}
