package hostmon

import "testing"

func TestParseMemUsed(t *testing.T) {
	in := "MemTotal:        8000000 kB\nMemFree:          100000 kB\nMemAvailable:    6000000 kB\n"
	used, err := ParseMemUsed([]byte(in))
	if err != nil || used != (8000000-6000000)*1024 {
		t.Fatalf("used %d, %v", used, err)
	}
	for _, bad := range []string{"", "MemTotal: 10 kB\n", "MemTotal: x kB\nMemAvailable: 1 kB\n", "MemTotal: 1 kB\nMemAvailable: 2 kB\n", "MemTotal: 1 MB\nMemAvailable: 1 kB\n"} {
		if _, err := ParseMemUsed([]byte(bad)); err == nil {
			t.Errorf("ParseMemUsed(%q) accepted", bad)
		}
	}
}

func FuzzParseMemUsed(f *testing.F) {
	f.Add([]byte("MemTotal: 10 kB\nMemAvailable: 5 kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if used, err := ParseMemUsed(b); err == nil && used < 0 {
			t.Fatalf("negative use %d", used)
		}
	})
}
