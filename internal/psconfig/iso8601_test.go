package psconfig

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	good := map[string]time.Duration{
		"PT30S":      30 * time.Second,
		"PT4H":       4 * time.Hour,
		"PT10M":      10 * time.Minute,
		"P1D":        24 * time.Hour,
		"P1W":        7 * 24 * time.Hour,
		"P1DT12H":    36 * time.Hour,
		"PT0.5S":     500 * time.Millisecond,
		"PT1H30M5S":  time.Hour + 30*time.Minute + 5*time.Second,
		"PT0S":       0,
		"PT1.25M":    75 * time.Second,
		"P0DT0H0M1S": time.Second,
	}
	for in, want := range good {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "P", "PT", "30S", "PT30", "P1Y", "P1M", "PT-5S", "P1DT", "PT1S ", "PT1e9S", "P99999W", "pt30s"} {
		if d, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", in, d)
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	got, err := ParseTimestamp("2026-03-01T12:00:00+02:00")
	if err != nil || !got.Equal(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("got %v, %v", got, err)
	}
	for _, in := range []string{"PT1H", "@R/PT1H", "@PT1H", "tomorrow", ""} {
		if _, err := ParseTimestamp(in); err == nil {
			t.Errorf("ParseTimestamp(%q): want an error", in)
		}
	}
}
