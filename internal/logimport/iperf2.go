package logimport

import (
	"bufio"
	"bytes"
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
func ParseIperf2Text(data []byte) []*Test {
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
				ctx.Granted = quantity(m[1], m[2])
				switch {
				case m[3] != "":
					ctx.Window, ctx.DefaultWindow = quantity(m[3], m[4]), false
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
				v, _ := strconv.ParseInt(m[1], 10, 64)
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
				n, err := strconv.ParseInt(m[4], 10, 64)
				if last := &cur.Lines[len(cur.Lines)-1]; err == nil && last.ID == m[1] {
					last.OutOfOrder = &n
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
			l, rounded, ok := intervalLine(m)
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
	return out
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

func quantity(num, prefix string) *Quantity {
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return nil
	}
	label := num + " " + prefix + "Byte"
	return &Quantity{Value: math.Round(v * unitScale(prefix, true)), Label: label}
}

func intervalLine(m []string) (Line, bool, bool) {
	f := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
	l := Line{ID: m[1], Start: f(m[2]), End: f(m[3])}
	if l.End < l.Start {
		return l, false, false
	}
	l.Bytes = f(m[4]) * unitScale(m[5], true)
	rate := f(m[6])
	if m[8] == "Bytes" {
		l.BitsPerSecond = rate * unitScale(m[7], true) * 8
	} else {
		l.BitsPerSecond = rate * unitScale(m[7], false)
	}
	if u := reUDPTail.FindStringSubmatch(m[9]); u != nil {
		j := f(u[1])
		lost, _ := strconv.ParseInt(u[2], 10, 64)
		total, _ := strconv.ParseInt(u[3], 10, 64)
		l.Jitter = &j
		if total > 0 && lost >= 0 {
			l.Lost, l.Total = &lost, &total
		}
	}
	rounded := m[5] != "" || strings.Contains(m[4], ".")
	return l, rounded, true
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
			if v, err := strconv.ParseFloat(m[2], 64); err == nil && v > 0 {
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
