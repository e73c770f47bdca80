package logimport

import (
	"bufio"
	"bytes"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// iperf2's -y C: timestamp,src,sport,dst,dport,id,start-end,bytes,bps
// and, for UDP, jitter,lost,total,percent,out-of-order.
var reCSV = regexp.MustCompile(`^(\d{14}(?:\.\d+)?),([^,]*),(\d+),([^,]*),(\d+),(-?\d+),(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?),(\d+),(\d+(?:\.\d+)?)(?:,(-?\d+(?:\.\d+)?),(-?\d+),(-?\d+),(-?\d+(?:\.\d+)?),(-?\d+))?`)

// errNotCSV is a file with no -y C line.
var errNotCSV = errors.New("no iperf -y C lines")

// ParseIperf2CSV reads iperf2's -y C output: one test per file, its
// streams' lines and, when there is one, the sum's (ID -1). Byte counts
// are exact in this form.
func ParseIperf2CSV(data []byte) (*Test, time.Time, error) {
	t := &Test{Proto: "tcp", Role: "client", Streams: map[string]bool{}}
	var started time.Time
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxLineLen)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		m := reCSV.FindStringSubmatch(line)
		if m == nil {
			return nil, started, errNotCSV
		}
		if t.FirstLine == 0 {
			t.FirstLine = n
			if ts, err := time.ParseInLocation("20060102150405", m[1][:14], time.Local); err == nil && ts.Year() >= 1990 {
				started = ts
			}
			t.LocalHost, t.RemoteHost = m[2], m[4]
		}
		t.LastLine = n
		f := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
		l := Line{ID: m[6], Start: f(m[7]), End: f(m[8]), Bytes: f(m[9]), BitsPerSecond: f(m[10])}
		if l.ID == "-1" {
			l.ID = "SUM"
		} else {
			t.Streams[l.ID] = true
		}
		if m[11] != "" {
			t.Proto = "udp"
			lost, _ := strconv.ParseInt(m[12], 10, 64)
			total, _ := strconv.ParseInt(m[13], 10, 64)
			if total > 0 && lost >= 0 {
				j := f(m[11])
				ooo, _ := strconv.ParseInt(m[15], 10, 64)
				l.Jitter, l.Lost, l.Total, l.OutOfOrder = &j, &lost, &total, &ooo
			}
		}
		if l.End < l.Start {
			continue
		}
		t.Lines = append(t.Lines, l)
	}
	if len(t.Lines) == 0 {
		return nil, started, errNotCSV
	}
	return t, started, nil
}
