package units

import "testing"

func FuzzParseSize(f *testing.F) {
	for _, input := range []string{"131072", "16M", "64k", "1.5G", "", "-1", "NaN", "9223372036854775808", ".5K", "1.2.3", "12x", "8388607T"} {
		f.Add(input)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			if n != 0 {
				t.Errorf("ParseSize(%q) = %d with error %v; want 0", s, n, err)
			}
			return
		}
		if n < 0 {
			t.Errorf("ParseSize(%q) = %d; want a non-negative count", s, n)
		}
	})
}
