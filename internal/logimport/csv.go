package logimport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
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
		l, err := csvLine(m)
		if err != nil {
			return nil, started, fmt.Errorf("line %d: %w", n, err)
		}
		if l.ID == "-1" {
			l.ID = "SUM"
		} else {
			t.Streams[l.ID] = true
		}
		if m[11] != "" {
			t.Proto = "udp"
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

// csvLine reads one -y C line's figures, each within the bounds of a
// text log's (number, count).
func csvLine(m []string) (Line, error) {
	l := Line{ID: m[6]}
	var err error
	if _, err = strconv.ParseInt(l.ID, 10, 32); err != nil {
		return l, &RangeError{What: "stream ID", Number: l.ID, Max: math.MaxInt32}
	}
	if l.Start, err = number("start time", m[7], 1, maxLineSeconds); err != nil {
		return l, err
	}
	if l.End, err = number("end time", m[8], 1, maxLineSeconds); err != nil {
		return l, err
	}
	if l.Bytes, err = number("byte count", m[9], 1, maxLineBytes); err != nil {
		return l, err
	}
	if l.BitsPerSecond, err = number("rate", m[10], 1, maxLineBps); err != nil {
		return l, err
	}
	if m[11] == "" {
		return l, nil
	}
	var lost, total, ooo int64
	if lost, err = count(m[12]); err != nil {
		return l, err
	}
	if total, err = count(m[13]); err != nil {
		return l, err
	}
	if ooo, err = count(m[15]); err != nil {
		return l, err
	}
	if total > 0 && lost >= 0 {
		j, err := number("jitter", m[11], 1, maxJitterMs)
		if err != nil {
			return l, err
		}
		l.Jitter, l.Lost, l.Total, l.OutOfOrder = &j, &lost, &total, &ooo
	}
	return l, nil
}
