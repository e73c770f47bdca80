package logimport

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func addFixtures(f *testing.F, pattern string) {
	files, _ := filepath.Glob(filepath.Join("testdata", pattern))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func FuzzIperf2Text(f *testing.F) {
	addFixtures(f, "*.txt")
	f.Add([]byte("[SUM] 0.0-1.0 sec 99999999999999999999 TBytes 1e999 Gbits/sec 1 ms -5/-1 (x)\n"))
	f.Add([]byte("[  3] 0.0-1.0 sec " + strings.Repeat("9", 400) + " MBytes 1 Mbits/sec\n"))
	f.Add([]byte("[  3] 0.0-1.0 sec 1 MBytes 1" + strings.Repeat("0", 320) + " Mbits/sec\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tests, err := ParseIperf2Text(b)
		if err != nil && !strings.HasPrefix(err.Error(), "line ") {
			t.Fatalf("error %q does not name its line", err)
		}
		for _, test := range tests {
			if test.LastLine < test.FirstLine {
				t.Fatalf("lines %d..%d", test.FirstLine, test.LastLine)
			}
			for _, l := range test.Lines {
				for _, v := range []float64{l.Start, l.End, l.Bytes, l.BitsPerSecond} {
					if math.IsInf(v, 0) || math.IsNaN(v) {
						t.Fatalf("a line with %v: %+v", v, l)
					}
				}
			}
		}
	})
}

func FuzzIperf2CSV(f *testing.F) {
	addFixtures(f, "*.csv")
	f.Fuzz(func(t *testing.T, b []byte) {
		test, _, err := ParseIperf2CSV(b)
		if err != nil {
			return
		}
		for _, l := range test.Lines {
			for _, v := range []float64{l.Start, l.End, l.Bytes, l.BitsPerSecond} {
				if math.IsInf(v, 0) || math.IsNaN(v) {
					t.Fatalf("a line with %v: %+v", v, l)
				}
			}
		}
	})
}

func FuzzFile(f *testing.F) {
	addFixtures(f, "*")
	f.Add([]byte("[  3] 0.0-1.0 sec " + strings.Repeat("9", 400) + " Bytes 1 bits/sec\n"))
	f.Add([]byte("20260101120000,1.2.3.4,1,5.6.7.8,2,3,0.0-1.0," + strings.Repeat("9", 400) + ",1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		runs, err := File("f", b)
		if err == nil && len(runs) == 0 {
			t.Fatal("no error and no runs")
		}
		for _, r := range runs {
			if r.ID == "" || r.Source == "" || r.State == "" {
				t.Fatalf("incomplete run %+v", r)
			}
			// What is stored can be listed as JSON: every figure finite.
			if _, err := json.Marshal([]any{r.Axes, r.Summary, r.Intervals, r.Hosts, r.Limits}); err != nil {
				t.Fatalf("run %s: %v", r.ID, err)
			}
		}
	})
}
