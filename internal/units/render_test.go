package units

import "testing"

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

func TestFormatTransfer(t *testing.T) {
	tests := []struct {
		bytes float64
		f     Format
		want  string
	}{
		// metrics.md: 372 MBytes in 15 s is 208 Mbits/sec.
		{372 * mib, 'a', " 372 MBytes"},
		{2.41 * gib, 'a', "2.41 GBytes"},
		{515 * mib, 'a', " 515 MBytes"},
		{1.01 * gib, 'a', "1.01 GBytes"},
		{1004 * mib, 'a', "1004 MBytes"}, // below 1024: stays in MBytes like iperf
		{0, 'a', "0.00 Bytes"},
		{1023, 'a', "1023 Bytes"},
		{16384, 'a', "16.0 KBytes"},
		{0, 0, "0.00 Bytes"}, // zero Format is adaptive
		// Precision switches where rounding would add a digit.
		{9.99, 'B', "9.99 Bytes"},
		{9.995, 'B', "10.0 Bytes"},
		{99.94, 'B', "99.9 Bytes"},
		{99.95, 'B', " 100 Bytes"},
		// Adaptive steps up once the figure would print as 1024.
		{1023.4 * kib, 'a', "1023 KBytes"},
		{1023.5 * kib, 'a', "1.00 MBytes"},
		{1023.5 * kib, 'K', "1024 KBytes"}, // a fixed unit never steps
		{1024 * gib, 'a', "1.00 TBytes"},
		{5000 * 1024 * gib, 'a', "5000 TBytes"}, // no unit past T
		// Bit letters pick the byte unit of the same scale.
		{2 * mib, 'k', "2048 KBytes"},
		{2 * mib, 'K', "2048 KBytes"},
		{2 * mib, 'm', "2.00 MBytes"},
		{2 * mib, 'g', "0.00 GBytes"},
		{1536, 'b', "1536 Bytes"},
		{1.5 * 1024 * gib, 'T', "1.50 TBytes"},
		{372 * mib, 'A', " 372 MBytes"},
	}
	for _, tt := range tests {
		if got := FormatTransfer(tt.bytes, tt.f); got != tt.want {
			t.Errorf("FormatTransfer(%v, %q) = %q; want %q", tt.bytes, byte(tt.f), got, tt.want)
		}
	}
}

func TestFormatRate(t *testing.T) {
	tests := []struct {
		bps  float64
		f    Format
		want string
	}{
		{372 * mib * 8 / 15, 'a', " 208 Mbits/sec"},
		{9.45e9, 'a', "9.45 Gbits/sec"},
		{14.4e9, 'a', "14.4 Gbits/sec"},
		{0, 'a', "0.00 bits/sec"},
		{999, 'a', " 999 bits/sec"},
		{999.4e3, 'a', " 999 Kbits/sec"},
		{999.5e3, 'a', "1.00 Mbits/sec"}, // steps up at 1000, not 1024
		{1e15, 'a', "1000 Tbits/sec"},
		{1e9, 'm', "1000 Mbits/sec"},
		{1e9, 'k', "1000000 Kbits/sec"},
		{1e9, 'b', "1000000000 bits/sec"},
		{2.5e12, 't', "2.50 Tbits/sec"},
		// Byte letters: bytes/sec by powers of 1024.
		{8 * mib, 'A', "1.00 MBytes/sec"},
		{8 * 1023.5, 'A', "1.00 KBytes/sec"},
		{8 * mib, 'K', "1024 KBytes/sec"},
		{8 * 1000, 'B', "1000 Bytes/sec"},
		{8 * gib, 'G', "1.00 GBytes/sec"},
		{8 * 3 * gib * 1024, 'T', "3.00 TBytes/sec"},
		{8 * mib, 'M', "1.00 MBytes/sec"},
	}
	for _, tt := range tests {
		if got := FormatRate(tt.bps, tt.f); got != tt.want {
			t.Errorf("FormatRate(%v, %q) = %q; want %q", tt.bps, byte(tt.f), got, tt.want)
		}
	}
}
