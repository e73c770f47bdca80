package hostmon

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// interruptsFixture is x86 /proc/interrupts on two CPUs, with the ERR and
// MIS system-wide lines and an IRQ number wider than the label column.
const interruptsFixture = `           CPU0       CPU1       
  0:         44          0   IO-APIC   2-edge      timer
 24:          1          0  IO-APIC   5-edge      ACPI:Ged
 31:          0         51 PCI-MSIX-0000:00:01.0   3-edge      virtio0-stats
1234:         7          8  PCI-MSI 524288-edge      eth0-rx-0
NMI:          0          0   Non-maskable interrupts
LOC:     151270     148870   Local timer interrupts
ERR:          0
MIS:          0
PIN:          0          0   Posted-interrupt notification event
`

func TestParseInterrupts(t *testing.T) {
	got, err := ParseInterrupts([]byte(interruptsFixture))
	if err != nil {
		t.Fatal(err)
	}
	want := []IRQLine{
		{"0", "IO-APIC 2-edge timer", []uint64{44, 0}},
		{"24", "IO-APIC 5-edge ACPI:Ged", []uint64{1, 0}},
		{"31", "PCI-MSIX-0000:00:01.0 3-edge virtio0-stats", []uint64{0, 51}},
		{"1234", "PCI-MSI 524288-edge eth0-rx-0", []uint64{7, 8}},
		{"NMI", "Non-maskable interrupts", []uint64{0, 0}},
		{"LOC", "Local timer interrupts", []uint64{151270, 148870}},
		{"ERR", "", []uint64{0}},
		{"MIS", "", []uint64{0}},
		{"PIN", "Posted-interrupt notification event", []uint64{0, 0}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.IRQ != w.IRQ || g.Desc != w.Desc || !slices.Equal(g.PerCPU, w.PerCPU) {
			t.Errorf("line %d: got %+v, want %+v", i, g, w)
		}
	}
}

func TestParseInterruptsErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", "header missing"},
		{"missing header", "  0:  44  0  IO-APIC timer\n", "header missing"},
		{"bad header", "CPU0 CPUx\n", "header missing"},
		{"no label", "CPU0 CPU1\n 44 0 IO-APIC\n", "not an IRQ label"},
		{"empty label", "CPU0\n: 1\n", "not an IRQ label"},
		{"too few counts", "CPU0 CPU1 CPU2\n 0: 1 2 IO-APIC timer\n", "2 counts for 3 CPUs"},
		{"no counts", "CPU0 CPU1\n 0: IO-APIC timer\n", "0 counts for 2 CPUs"},
		{"one count then desc", "CPU0 CPU1\n 0: 5 IO-APIC timer\n", "1 counts for 2 CPUs"},
		{"overflow", "CPU0\n 0: 18446744073709551616 timer\n", "out of range"},
		{"duplicate", "CPU0\n 0: 1 a\n 0: 2 b\n", "twice"},
	}
	for _, tt := range tests {
		_, err := ParseInterrupts([]byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

// Numbers after the per-CPU counts belong to the description.
func TestParseInterruptsExtraNumbers(t *testing.T) {
	got, err := ParseInterrupts([]byte("CPU0 CPU1\n 5: 1 2 3 4 chip\n"))
	if err != nil || len(got) != 1 || !slices.Equal(got[0].PerCPU, []uint64{1, 2}) || got[0].Desc != "3 4 chip" {
		t.Errorf("got %+v, %v", got, err)
	}
}

func TestInterruptDeltas(t *testing.T) {
	before := []IRQLine{
		{"LOC", "Local timer interrupts", []uint64{100, 100}},
		{"30", "eth0-rx-0", []uint64{5, 0}},
		{"31", "eth0-tx-0", []uint64{9, 9}},
		{"ERR", "", []uint64{1}},
		{"RES", "Rescheduling interrupts", []uint64{50, 50}},
	}
	after := []IRQLine{
		{"LOC", "Local timer interrupts", []uint64{110, 130}}, // 40
		{"30", "eth0-rx-0", []uint64{905, 0}},                 // 900
		{"31", "eth0-tx-0", []uint64{9, 9}},                   // idle: left out
		{"ERR", "", []uint64{2}},                              // 1
		{"RES", "Rescheduling interrupts", []uint64{40, 51}},  // went back on CPU0: 0+1
		{"99", "new device", []uint64{0, 1}},                  // new: from zero, 1
	}
	tests := []struct {
		top  int
		want []string // "IRQ=total"
	}{
		{0, []string{"30=900", "LOC=40", "99=1", "ERR=1", "RES=1"}},
		{2, []string{"30=900", "LOC=40"}},
		{10, []string{"30=900", "LOC=40", "99=1", "ERR=1", "RES=1"}},
	}
	for _, tt := range tests {
		got := InterruptDeltas(before, after, tt.top)
		var names []string
		for _, d := range got {
			names = append(names, d.IRQ+"="+strconv.FormatUint(d.Total, 10))
		}
		if !slices.Equal(names, tt.want) {
			t.Errorf("top %d: got %v, want %v", tt.top, names, tt.want)
		}
	}
	got := InterruptDeltas(before, after, 1)
	if len(got) != 1 || !slices.Equal(got[0].PerCPU, []uint64{900, 0}) || got[0].Desc != "eth0-rx-0" {
		t.Errorf("busiest = %+v", got)
	}
}

func FuzzParseInterrupts(f *testing.F) {
	f.Add([]byte(interruptsFixture))
	f.Add([]byte("CPU0\n0: 1\n"))
	f.Add([]byte("CPU0 CPU1\nERR: 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := ParseInterrupts(data)
		if err != nil {
			return
		}
		// Every line has the header's count, or one system-wide count.
		ncpu := 0
		for _, l := range lines {
			if n := len(l.PerCPU); n == 0 || (n != 1 && ncpu != 0 && n != ncpu) {
				t.Fatalf("IRQ %q has %d counts, others %d", l.IRQ, n, ncpu)
			} else if n != 1 {
				ncpu = n
			}
		}
		d := InterruptDeltas(nil, lines, 3)
		if len(d) > 3 {
			t.Fatalf("top 3 returned %d", len(d))
		}
		for i := 1; i < len(d); i++ {
			if d[i].Total > d[i-1].Total {
				t.Fatalf("not descending: %+v", d)
			}
		}
	})
}
