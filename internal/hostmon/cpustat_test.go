package hostmon

import (
	"math"
	"strings"
	"testing"
)

const statFixture = `cpu  3338 10 2850 45287 290 5 264 7 0 0
cpu0 1380 4 1224 23268 17 2 127 3 0 0
cpu1 1958 6 1626 22018 273 3 136 4 0 0
intr 287948 0 0 0
ctxt 419041
btime 1796018024
softirq 436430 0 8776 6 281597
`

func TestParseCPUStat(t *testing.T) {
	got, err := ParseCPUStat([]byte(statFixture))
	if err != nil {
		t.Fatal(err)
	}
	want := []CPUStat{
		{"cpu", 3338, 10, 2850, 45287, 290, 5, 264, 7},
		{"cpu0", 1380, 4, 1224, 23268, 17, 2, 127, 3},
		{"cpu1", 1958, 6, 1626, 22018, 273, 3, 136, 4},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestParseCPUStatShortLine(t *testing.T) {
	// A 2.4 kernel prints only user nice system idle; the rest stay zero.
	got, err := ParseCPUStat([]byte("cpu 1 2 3 4\ncpu0 1 2 3 4\n"))
	if err != nil || len(got) != 2 || got[1] != (CPUStat{Name: "cpu0", User: 1, Nice: 2, System: 3, Idle: 4}) {
		t.Errorf("got %+v, %v", got, err)
	}
}

func TestParseCPUStatErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", "no cpu lines"},
		{"no cpu lines", "intr 1 2\nctxt 3\n", "no cpu lines"},
		{"missing aggregate", "cpu0 1 2 3 4\n", "before the aggregate"},
		{"too few columns", "cpu 1 2 3\n", "3 columns"},
		{"extra column", "cpu 1 2 3 4 5 6 7 8 9 10 11\n", "11 columns"},
		{"overflow", "cpu 18446744073709551616 0 0 0\n", "out of range"},
		{"negative", "cpu 1 -2 3 4\n", "column 2"},
		{"duplicate", "cpu 1 2 3 4\ncpu 1 2 3 4\n", "twice"},
	}
	for _, tt := range tests {
		_, err := ParseCPUStat([]byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestSplit(t *testing.T) {
	before := []CPUStat{
		{Name: "cpu", User: 100, System: 100, Idle: 100},
		{Name: "cpu0", User: 10, Nice: 0, System: 10, Idle: 10, IOWait: 0, IRQ: 0, SoftIRQ: 0, Steal: 0},
		{Name: "cpu1", User: 50, Idle: 50},
		{Name: "cpu9", User: 1}, // gone from after: dropped
	}
	after := []CPUStat{
		{Name: "cpu", User: 100, System: 100, Idle: 100}, // no ticks passed
		// 100 ticks: user 20+nice 10, system 10, softirq 25, irq 5, idle 15+iowait 5, steal 10
		{Name: "cpu0", User: 30, Nice: 10, System: 20, Idle: 25, IOWait: 5, IRQ: 5, SoftIRQ: 25, Steal: 10},
		{Name: "cpu1", User: 40, Idle: 60}, // user went backwards (hot-plug): counts as 0
		{Name: "cpu2", User: 5},            // new in after: no baseline, dropped
	}
	got := Split(before, after)
	want := []CPUSplit{
		{Name: "cpu"},
		{Name: "cpu0", User: 30, System: 10, SoftIRQ: 25, IRQ: 5, Idle: 20, Other: 10},
		{Name: "cpu1", Idle: 100},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Name != w.Name || !near(g.User, w.User) || !near(g.System, w.System) || !near(g.SoftIRQ, w.SoftIRQ) ||
			!near(g.IRQ, w.IRQ) || !near(g.Idle, w.Idle) || !near(g.Other, w.Other) {
			t.Errorf("%s: got %+v, want %+v", w.Name, g, w)
		}
	}
}

func FuzzParseCPUStat(f *testing.F) {
	f.Add([]byte(statFixture))
	f.Add([]byte("cpu 1 2 3 4\n"))
	f.Add([]byte("cpu0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseCPUStat(data)
		if err != nil {
			return
		}
		if len(s) == 0 || s[0].Name != "cpu" {
			t.Fatalf("no aggregate first: %+v", s)
		}
		// Whatever parses must split cleanly against itself shifted.
		for _, sp := range Split(s, s) {
			if sum := sp.User + sp.System + sp.SoftIRQ + sp.IRQ + sp.Idle + sp.Other; sum != 0 {
				t.Fatalf("zero interval split sums to %v", sum)
			}
		}
		doubled := make([]CPUStat, len(s))
		for i, c := range s {
			doubled[i] = CPUStat{c.Name, c.User * 2, c.Nice * 2, c.System * 2, c.Idle * 2, c.IOWait * 2, c.IRQ * 2, c.SoftIRQ * 2, c.Steal * 2}
		}
		for _, sp := range Split(s, doubled) {
			sum := sp.User + sp.System + sp.SoftIRQ + sp.IRQ + sp.Idle + sp.Other
			if sum != 0 && math.Abs(sum-100) > 1e-6 {
				t.Fatalf("split %+v sums to %v", sp, sum)
			}
		}
	})
}
