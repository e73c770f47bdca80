package tcpinfo

import (
	"encoding/binary"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestDecodeBBR(t *testing.T) {
	raw := make([]byte, bbrInfoLen)
	for i, v := range []uint32{7, 2, 30, 739, 512} { // bw_lo, bw_hi, min_rtt, pacing, cwnd
		binary.NativeEndian.PutUint32(raw[4*i:], v)
	}
	tests := []struct {
		name    string
		raw     []byte
		want    BBR
		wantErr bool
	}{
		{"full", raw, BBR{BandwidthBps: 2<<32 | 7, MinRTTus: 30, PacingGain: 739, CwndGain: 512}, false},
		{"longer", append(slices.Clone(raw), 9, 9, 9, 9), BBR{BandwidthBps: 2<<32 | 7, MinRTTus: 30, PacingGain: 739, CwndGain: 512}, false},
		{"short", raw[:16], BBR{}, true}, // vegas/dctcp size
		{"empty", nil, BBR{}, true},
	}
	for _, tt := range tests {
		got, err := decodeBBR(tt.raw)
		if tt.wantErr {
			if err == nil {
				t.Errorf("%s: no error, got %+v", tt.name, got)
			}
			continue
		}
		if err != nil || *got != tt.want {
			t.Errorf("%s: got %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
}

func FuzzDecodeBBR(f *testing.F) {
	f.Add(make([]byte, bbrInfoLen))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := decodeBBR(raw)
		if (err == nil) != (len(raw) >= bbrInfoLen) {
			t.Fatalf("len %d: err = %v", len(raw), err)
		}
		if err == nil && got == nil {
			t.Fatal("nil BBR without error")
		}
	})
}

// allowed reports whether an unprivileged socket may choose cc.
func allowed(t *testing.T, cc string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
	if err != nil {
		t.Skipf("cannot read allowed congestion list: %v", err)
	}
	return slices.Contains(strings.Fields(string(b)), cc)
}

func TestGetBBR(t *testing.T) {
	if !allowed(t, "bbr") {
		t.Skip("bbr not in tcp_allowed_congestion_control")
	}
	client, _ := transfer(t, "bbr")
	rc, err := client.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	got, err := GetBBR(rc)
	if err != nil {
		t.Fatal(err)
	}
	// BBR's gains are never zero, and after 1 MB acked it has a bandwidth sample.
	if got.PacingGain == 0 || got.CwndGain == 0 || got.BandwidthBps == 0 {
		t.Errorf("implausible BBR state %+v", got)
	}
}

func TestGetBBRNotBBR(t *testing.T) {
	if !allowed(t, "reno") {
		t.Skip("reno not in tcp_allowed_congestion_control")
	}
	client, _ := transfer(t, "reno")
	rc, err := client.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	_, err = GetBBR(rc)
	if !errors.Is(err, ErrNotBBR) || !strings.Contains(err.Error(), `"reno"`) {
		t.Errorf("GetBBR on reno: %v, want ErrNotBBR naming reno", err)
	}
}

// setCongestion is used by transfer before any data flows.
func setCongestion(fd uintptr, cc string) error {
	return unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc)
}
