package logimport

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Test is one test found in a log, before it becomes an archived run.
type Test struct {
	Role       string // "client", "server" or "" when the log does not say
	Proto      string // "tcp" or "udp"
	LocalHost  string
	RemoteHost string
	Window     *Quantity // requested; nil with DefaultWindow when nothing was asked
	// DefaultWindow: the log says the window was the system's default,
	// which is its own axis value ("default"), not the size it came to.
	DefaultWindow bool
	Granted       *Quantity // the socket buffer the log says was granted
	Length        *int64    // UDP datagram size
	Duration      *float64  // -t from a command line in the log
	Streams       map[string]bool
	Lines         []Line // every report line, in order
	FirstLine     int    // 1-based line numbers of the test in the log
	LastLine      int
	Rounded       bool // byte counts were printed in rounded units
	hasReports    bool
}

// Quantity is a number as a log printed it, in base units.
type Quantity struct {
	Value float64
	Label string
}

// Line is one report line: a stream's (or [SUM]'s) figures over a span.
type Line struct {
	ID            string // "1", "SUM"
	Start, End    float64
	Bytes         float64
	BitsPerSecond float64
	Jitter        *float64 // ms
	Lost, Total   *int64
	OutOfOrder    *int64 // datagrams received out of order, when iperf said
	ServerReport  bool   // a UDP client's copy of the server's figures
}

var (
	// [  3] 0.0-15.0 sec  372 MBytes  208 Mbits/sec [ 0.010 ms 671/934133 (0.072%)]
	reInterval = regexp.MustCompile(`^\[\s*(\d+|SUM)\]\s+(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)\s+sec\s+(\d+(?:\.\d+)?)\s+([KMGT]?)Bytes\s+(\d+(?:\.\d+)?)\s+([KMGT]?)(bits|Bytes)/sec(.*)$`)
	reUDPTail  = regexp.MustCompile(`^\s+(\d+(?:\.\d+)?)\s+ms\s+(-?\d+)/\s*(-?\d+)`)
	reConnect  = regexp.MustCompile(`^\[\s*(\d+)\]\s+local\s+(\S+)\s+port\s+\d+\s+connected\s+(?:with|to)\s+(\S+)\s+port\s+\d+`)
	reClient   = regexp.MustCompile(`^Client connecting to\s+([^,\s]+),\s+(TCP|UDP)\s+port`)
	reServer   = regexp.MustCompile(`^Server listening on\s+(TCP|UDP)\s+port`)
	reWindow   = regexp.MustCompile(`^(?:TCP window|UDP buffer) size:\s*(\d+(?:\.\d+)?)\s*([KMGT]?)Byte(?:s)?\s*(?:\(WARNING: requested\s*(\d+(?:\.\d+)?)\s*([KMGT]?)Byte)?`)
	reSending  = regexp.MustCompile(`^Sending\s+(\d+)\s+byte datagrams`)
	reReport   = regexp.MustCompile(`^\[\s*(\d+|SUM)\]\s+Server Report:`)
	reOOO      = regexp.MustCompile(`^\[\s*(\d+|SUM)\]\s+(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)\s+sec\s+(\d+)\s+datagrams received out-of-order`)
	// Where an HTML page flattened a log onto one line, these start lines.
	reSplit  = regexp.MustCompile(`\s*(-{20,}|\[\s*(?:\d+|SUM|ID)\]|Client connecting to|Server listening on|TCP window size:|UDP buffer size:)`)
	reCmdArg = regexp.MustCompile(`(?:^|\s)-([wtPlu])(?:\s+(\S+))?`)
)

// unitScale is iperf's: bytes in powers of 1024, bits in powers of 1000.
func unitScale(prefix string, bytes bool) float64 {
	base := 1000.0
	if bytes {
		base = 1024
	}
	switch prefix {
	case "K":
		return base
	case "M":
		return base * base
	case "G":
		return base * base * base
	case "T":
		return base * base * base * base
	}
	return 1
}

// maxLineLen bounds a log line; longer ones are cut (a log has none).
const maxLineLen = 64 << 10

// ParseIperf2Text finds the tests in an iperf2 text log: client or server
// output, with or without -i intervals, -P [SUM] lines and UDP reports,
// even inside other text (a mail, a web page flattened onto one line).
// A report line with a number out of range (not finite, or beyond what a
// test can measure) is the error, naming its line: such a figure would
// be stored as nonsense, or not at all.
func ParseIperf2Text(data []byte) ([]*Test, error) {
	var tests []*Test
	var cur *Test
	var ctx Test // what the last header said, inherited by the tests that follow it
	pendingReport := false
	start := func(n int) {
		t := &Test{Role: ctx.Role, Proto: ctx.Proto, RemoteHost: ctx.RemoteHost, Window: ctx.Window, Length: ctx.Length,
			DefaultWindow: ctx.DefaultWindow, Granted: ctx.Granted,
			Duration: ctx.Duration, Streams: map[string]bool{}, FirstLine: n, LastLine: n}
		tests = append(tests, t)
		cur = t
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxLineLen)
	n := 0
	for sc.Scan() {
		n++
		raw := sc.Text()
		for _, line := range splitFlattened(raw) {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			if strings.Contains(line, "iperf ") && reCmdArg.MatchString(line) {
				ctx.Duration, ctx.Window, ctx.DefaultWindow = nil, nil, false
				readCommand(line, &ctx)
				continue
			}
			if m := reClient.FindStringSubmatch(line); m != nil {
				ctx.Role, ctx.Proto, ctx.RemoteHost = "client", strings.ToLower(m[2]), m[1]
				ctx.Window, ctx.Length, ctx.DefaultWindow, ctx.Granted = nil, nil, false, nil
				cur = nil
				continue
			}
			if m := reServer.FindStringSubmatch(line); m != nil {
				ctx.Role, ctx.Proto, ctx.RemoteHost = "server", strings.ToLower(m[1]), ""
				ctx.Window, ctx.Length, ctx.DefaultWindow, ctx.Granted = nil, nil, false, nil
				cur = nil
				continue
			}
			if m := reWindow.FindStringSubmatch(line); m != nil {
				granted, err := quantity(m[1], m[2])
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", n, err)
				}
				ctx.Granted = granted
				switch {
				case m[3] != "":
					asked, err := quantity(m[3], m[4])
					if err != nil {
						return nil, fmt.Errorf("line %d: %w", n, err)
					}
					ctx.Window, ctx.DefaultWindow = asked, false
				case ctx.Window == nil && strings.Contains(line, "(default)"):
					ctx.DefaultWindow = true
				case ctx.Window == nil:
					ctx.Window = ctx.Granted
				}
				if strings.HasPrefix(line, "UDP") && ctx.Proto == "" {
					ctx.Proto = "udp"
				}
				continue
			}
			if m := reSending.FindStringSubmatch(line); m != nil {
				v, err := strconv.ParseInt(m[1], 10, 64)
				if err != nil || v > maxDatagram {
					return nil, fmt.Errorf("line %d: %w", n, &RangeError{What: "datagram size", Number: m[1], Max: maxDatagram})
				}
				ctx.Length = &v
				continue
			}
			if m := reConnect.FindStringSubmatch(line); m != nil {
				if cur == nil || cur.hasReports {
					start(n)
				}
				cur.Streams[m[1]] = true
				cur.LocalHost = m[2]
				if cur.Role != "client" || cur.RemoteHost == "" {
					cur.RemoteHost = m[3]
				}
				cur.LastLine = n
				continue
			}
			if m := reOOO.FindStringSubmatch(line); m != nil && cur != nil && len(cur.Lines) > 0 {
				// Belongs to the report line just before it.
				ooo, err := count(m[4])
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", n, err)
				}
				if last := &cur.Lines[len(cur.Lines)-1]; last.ID == m[1] {
					last.OutOfOrder = &ooo
				}
				continue
			}
			if reReport.MatchString(line) {
				pendingReport = true
				continue
			}
			m := reInterval.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			l, rounded, ok, err := intervalLine(m)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			if !ok {
				continue
			}
			if cur == nil {
				start(n)
			}
			l.ServerReport = pendingReport
			pendingReport = false
			if l.Jitter != nil && cur.Proto == "" {
				cur.Proto = "udp"
			}
			if l.ID != "SUM" {
				cur.Streams[l.ID] = true
			}
			cur.Rounded = cur.Rounded || rounded
			cur.Lines = append(cur.Lines, l)
			cur.hasReports = true
			cur.LastLine = n
		}
	}
	var out []*Test
	for _, t := range tests {
		if len(t.Lines) > 0 {
			if t.Proto == "" {
				t.Proto = "tcp"
			}
			if t.Proto == "tcp" && t.receiverUDP() {
				// UDP receiver lines under an earlier TCP test's header: that
				// header's window and role are not this test's.
				t.Proto, t.Window, t.Role, t.DefaultWindow, t.Granted = "udp", nil, "server", false, nil
			}
			out = append(out, t)
		}
	}
	return out, nil
}

func splitFlattened(line string) []string {
	if len(line) < 200 { // a log's own line; only flattened pages are long
		return []string{line}
	}
	idx := reSplit.FindAllStringIndex(line, -1)
	if len(idx) < 2 {
		return []string{line}
	}
	var out []string
	prev := 0
	for _, ix := range idx {
		out = append(out, line[prev:ix[0]])
		prev = ix[0]
	}
	out = append(out, line[prev:])
	for i, s := range out {
		if strings.HasPrefix(strings.TrimSpace(s), "----") {
			out[i] = ""
		}
	}
	return out
}

// quantity reads a socket buffer's size as a log prints it.
func quantity(num, prefix string) (*Quantity, error) {
	v, err := number("buffer size", num, unitScale(prefix, true), maxBuffer)
	if err != nil {
		return nil, err
	}
	label := num + " " + prefix + "Byte"
	return &Quantity{Value: math.Round(v), Label: label}, nil
}

// Bounds on what one report line can say: beyond them a figure is a
// forgery or a corruption, not a measurement. Each keeps its sums (a
// test's streams, its intervals) exact in int64 and float64.
const (
	maxLineBytes   = 1 << 53 // 8 PiB in one line: a 400 Gbit/s test of two days
	maxLineBps     = 1e16    // 10 Pbit/s
	maxLineSeconds = 1e9     // 31 years
	maxJitterMs    = 1e9
	maxCount       = 1 << 53 // datagrams, lost or out of order
	maxBuffer      = 1 << 40 // a socket buffer: 1 TiB
	maxDatagram    = 1 << 20 // a datagram's size, as -l may ask it
)

// RangeError is a number in a log that is out of range: not finite once
// read, or beyond what a test measures.
type RangeError struct {
	What, Number string
	Max          float64
}

func (e *RangeError) Error() string {
	n := e.Number
	if len(n) > 24 {
		n = fmt.Sprintf("%s… (%d digits)", n[:20], len(n))
	}
	return fmt.Sprintf("%s %s is out of range (at most %g): not a figure a test measures", e.What, n, e.Max)
}

// number reads a log's number, scaled: an error unless the result is
// finite and at most limit.
func number(what, s string, scale, limit float64) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	v *= scale
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || math.Abs(v) > limit {
		return 0, &RangeError{What: what, Number: s, Max: limit}
	}
	return v, nil
}

// count reads a count of datagrams: an error unless it is within
// maxCount either way (iperf2 prints a negative loss when datagrams came
// out of order, and -1 for "unknown").
func count(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v > maxCount || v < -maxCount {
		return 0, &RangeError{What: "datagram count", Number: s, Max: maxCount}
	}
	return v, nil
}

func intervalLine(m []string) (l Line, rounded, ok bool, err error) {
	l.ID = m[1]
	if l.Start, err = number("start time", m[2], 1, maxLineSeconds); err != nil {
		return l, false, false, err
	}
	if l.End, err = number("end time", m[3], 1, maxLineSeconds); err != nil {
		return l, false, false, err
	}
	if l.End < l.Start {
		return l, false, false, nil
	}
	if l.Bytes, err = number("byte count", m[4], unitScale(m[5], true), maxLineBytes); err != nil {
		return l, false, false, err
	}
	scale := unitScale(m[7], false)
	if m[8] == "Bytes" {
		scale = unitScale(m[7], true) * 8
	}
	if l.BitsPerSecond, err = number("rate", m[6], scale, maxLineBps); err != nil {
		return l, false, false, err
	}
	if u := reUDPTail.FindStringSubmatch(m[9]); u != nil {
		j, err := number("jitter", u[1], 1, maxJitterMs)
		if err != nil {
			return l, false, false, err
		}
		lost, err := count(u[2])
		if err != nil {
			return l, false, false, err
		}
		total, err := count(u[3])
		if err != nil {
			return l, false, false, err
		}
		l.Jitter = &j
		if total > 0 && lost >= 0 {
			l.Lost, l.Total = &lost, &total
		}
	}
	rounded = m[5] != "" || strings.Contains(m[4], ".")
	return l, rounded, true, nil
}

// readCommand takes -w, -t, -P, -l and -u from an iperf command line
// that a scheduler printed into the log.
func readCommand(line string, ctx *Test) {
	line = line[strings.Index(line, "iperf "):]
	for _, m := range reCmdArg.FindAllStringSubmatch(line, -1) {
		switch m[1] {
		case "u":
			ctx.Proto = "udp"
		case "w":
			if q := parseSizeArg(m[2]); q != nil {
				ctx.Window = q
			}
		case "t":
			if v, err := strconv.ParseFloat(m[2], 64); err == nil && v > 0 && v <= maxLineSeconds {
				ctx.Duration = &v
			}
		case "l":
			if q := parseSizeArg(m[2]); q != nil {
				n := int64(q.Value)
				ctx.Length = &n
			}
		}
	}
}

// parseSizeArg reads iperf's -w 2097152, -w 256K or -w 2m.
func parseSizeArg(s string) *Quantity {
	if s == "" {
		return nil
	}
	mult := 1.0
	switch s[len(s)-1] {
	case 'k', 'K':
		mult = 1024
	case 'm', 'M':
		mult = 1024 * 1024
	case 'g', 'G':
		mult = 1024 * 1024 * 1024
	}
	num := s
	if mult != 1 {
		num = s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 || v > 1e15 {
		return nil
	}
	return &Quantity{Value: math.Round(v * mult), Label: s}
}

// receiverUDP reports lines with jitter and loss of the test's own (not a
// server report): the receiving end of a UDP test.
func (t *Test) receiverUDP() bool {
	for _, l := range t.Lines {
		if l.Jitter != nil && !l.ServerReport {
			return true
		}
	}
	return false
}
