package measure

import (
	"testing"
	"time"
)

func TestParseLists(t *testing.T) {
	sizes, err := ParseSizes("64:256:64, 1472,1K")
	if err != nil || len(sizes) != 6 || sizes[3] != 256 || sizes[4] != 1472 || sizes[5] != 1024 {
		t.Errorf("ParseSizes: %v, %v", sizes, err)
	}
	ds, err := ParseDurations("0:4us:2us,12,1ms")
	if err != nil || len(ds) != 5 || ds[1] != 2*time.Microsecond || ds[3] != 12*time.Microsecond || ds[4] != time.Millisecond {
		t.Errorf("ParseDurations: %v, %v", ds, err)
	}
	for _, bad := range []string{"", "64:32:8", "1:2", "64:128:0", "x", "1:1000000000:1"} {
		if _, err := ParseSizes(bad); err == nil {
			t.Errorf("ParseSizes(%q) accepted", bad)
		}
	}
	if _, err := ParseDurations("-5"); err == nil {
		t.Error("a negative spacing was accepted")
	}
}
