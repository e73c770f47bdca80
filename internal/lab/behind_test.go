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

// A report run through a lab names the buffers its host really runs:
// lab up's choice when the namespace holds its values, the values when
// someone set others (bench/truth.sh sizes them to the path), and the
// recorded choice when they can't be read.
func TestBuffersText(t *testing.T) {
	stock, big := StockTCPBuffers(), BigTCPBuffers()
	for _, tc := range []struct {
		chosen     TCPBuffers
		rmem, wmem string
		want       string
	}{
		{BuffersStock, stock["net.ipv4.tcp_rmem"], stock["net.ipv4.tcp_wmem"], "stock Linux (tcp_rmem 4096 131072 6291456, tcp_wmem 4096 16384 4194304)"},
		{BuffersStock, big["net.ipv4.tcp_rmem"], big["net.ipv4.tcp_wmem"], "big, 128 MiB"},
		{BuffersStock, "4096 131072 24000000", "4096 16384 12000000", "set by hand, neither lab up's stock nor big (tcp_rmem 4096 131072 24000000, tcp_wmem 4096 16384 12000000)"},
		{BuffersBig, "", "", "big, 128 MiB"},
		{"", "", "", "big, 128 MiB"}, // a lab from before the choice
	} {
		if got := buffersText(tc.chosen, tc.rmem, tc.wmem); !strings.HasPrefix(got, tc.want) {
			t.Errorf("buffersText(%q, %q, %q) = %q, want %q…", tc.chosen, tc.rmem, tc.wmem, got, tc.want)
		}
	}
	if line := (*RouterWatch)(nil).Line(); line != "" {
		t.Errorf("outside a lab: %q, want no line", line)
	}
	w := &RouterWatch{name: "wan", buffers: BuffersStock, rmem: stock["net.ipv4.tcp_rmem"], wmem: stock["net.ipv4.tcp_wmem"]}
	if want := `run through the lab "wan": this host's TCP buffers are stock Linux`; !strings.HasPrefix(w.Line(), want) {
		t.Errorf("Line() = %q, want %q…", w.Line(), want)
	}
}
