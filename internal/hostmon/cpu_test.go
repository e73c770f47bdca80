package hostmon

import (
	"math"
	"testing"
	"time"
)

func TestUsage(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(user, sys, wall time.Duration) CPUTimes {
		return CPUTimes{User: user, System: sys, Wall: t0.Add(wall)}
	}
	tests := []struct {
		name             string
		a, b             CPUTimes
		user, sys, total float64
	}{
		{"half a core", at(0, 0, 0), at(400*time.Millisecond, 100*time.Millisecond, time.Second), 40, 10, 50},
		{"two cores", at(time.Second, 0, 0), at(3*time.Second, time.Second, 1*time.Second), 200, 100, 300},
		{"idle", at(time.Second, time.Second, 0), at(time.Second, time.Second, time.Second), 0, 0, 0},
		{"no wall time", at(0, 0, 0), at(time.Second, 0, 0), 0, 0, 0},
		{"swapped", at(time.Second, time.Second, time.Second), at(0, 0, 0), 0, 0, 0},
		{"counter went back", at(time.Second, 0, 0), at(0, time.Second, time.Second), 0, 100, 100},
	}
	for _, tt := range tests {
		u, s, tot := Usage(tt.a, tt.b)
		if !near(u, tt.user) || !near(s, tt.sys) || !near(tot, tt.total) {
			t.Errorf("%s: Usage = %v %v %v, want %v %v %v", tt.name, u, s, tot, tt.user, tt.sys, tt.total)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
