package logimport

import (
	"os"
	"path/filepath"
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
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, test := range ParseIperf2Text(b) {
			if test.LastLine < test.FirstLine {
				t.Fatalf("lines %d..%d", test.FirstLine, test.LastLine)
			}
		}
	})
}

func FuzzIperf2CSV(f *testing.F) {
	addFixtures(f, "*.csv")
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseIperf2CSV(b)
	})
}

func FuzzFile(f *testing.F) {
	addFixtures(f, "*")
	f.Fuzz(func(t *testing.T, b []byte) {
		runs, err := File("f", b)
		if err == nil && len(runs) == 0 {
			t.Fatal("no error and no runs")
		}
		for _, r := range runs {
			if r.ID == "" || r.Source == "" || r.State == "" {
				t.Fatalf("incomplete run %+v", r)
			}
		}
	})
}
