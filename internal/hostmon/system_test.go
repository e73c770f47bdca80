package hostmon

import (
	"runtime"
	"testing"
)

func TestSystemInfoString(t *testing.T) {
	tests := []struct {
		in   SystemInfo
		want string
	}{
		{SystemInfo{Hostname: "vm", OS: "Linux", Release: "6.18.44", Machine: "x86_64"}, "Linux vm 6.18.44 x86_64"},
		{SystemInfo{Hostname: "mac", OS: "darwin", Machine: "arm64"}, "darwin mac arm64"},
		{SystemInfo{}, ""},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSystem(t *testing.T) {
	s := System()
	if s.OS == "" || s.Machine == "" {
		t.Fatalf("System() = %+v, want OS and Machine", s)
	}
	if runtime.GOOS == "linux" && (s.OS != "Linux" || s.Release == "") {
		t.Errorf("System() = %+v, want OS Linux and a release from uname", s)
	}
}
