package emit

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wireperf/wireperf/internal/spec"
)

// Text writes classic iperf-style text from the client's point of view.
// Each call writes its lines with a single Write, so output from other
// goroutines cannot land inside a report.
type Text struct {
	W   io.Writer
	Opt Options
	// ServerSide renders the server's record of a test (an iperf3 client's
	// --get-server-output): it accepted a connection, rather than made one.
	ServerSide bool
	// OneEnd writes interval rows with the local end's figures only,
	// as iperf3's server does: a server's own report, whose client's rows
	// never reach it.
	OneEnd bool

	columnsDone bool // the interval column header has been written
	provisional bool // an interval's UDP loss was printed before it was final
	groups      int  // interval groups written, for iperf's separators
	// rowLength is the test's -i, for the short tail's rule (spanAmounts).
	rowLength time.Duration
}

// separator sets off the summary, and interval groups of several lines.
const separator = "- - - - - - - - - - - - - - - - - - - - - - - - -"

// textLines collects one call's lines, each prefixed with the title.
type textLines struct {
	prefix string
	b      strings.Builder
}

// newLines starts a batch of lines titled by Opt.Title, or else by the
// spec's title, the way iperf3 -T prefixes every line.
func (t *Text) newLines(s spec.Spec) *textLines {
	title := t.Opt.Title
	if title == "" {
		title = s.Title
	}
	l := &textLines{}
	if title != "" {
		l.prefix = inert(title) + ":  "
	}
	return l
}

func (l *textLines) add(format string, args ...any) {
	l.b.WriteString(l.prefix)
	// Column padding leaves trailing blanks that only get in the way.
	l.b.WriteString(inert(strings.TrimRight(fmt.Sprintf(format, args...), " ")))
	l.b.WriteByte('\n')
}

// raw adds a line as it is, prefixed but not trimmed: another program's
// output, kept byte for byte but for control characters (inert).
func (l *textLines) raw(line string) {
	l.b.WriteString(l.prefix)
	l.b.WriteString(inert(line))
	l.b.WriteByte('\n')
}

// inert is text as it prints in a terminal and a log: a line may hold
// what a peer named (a title, a congestion control, another server's
// output), and a \r, \n or escape sequence in it could forge other lines,
// or another test's prefix in a server's report. Control characters
// (tab aside) and bytes that are not UTF-8 are written as Go escapes
// (\r, \x1b); other text is as it was.
func inert(text string) string {
	if spec.InertText(text) {
		return text
	}
	var b strings.Builder
	for i, r := range text {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(text[i:], "\uFFFD"):
			fmt.Fprintf(&b, "\\x%02x", text[i])
		case r != '\t' && unicode.IsControl(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (l *textLines) writeTo(w io.Writer) error {
	if l.b.Len() == 0 {
		return nil
	}
	_, err := io.WriteString(w, l.b.String())
	return err
}

// Header writes the connection lines and the socket buffers.
func (t *Text) Header(h Header) error {
	l := t.newLines(h.Spec)
	host, port := splitAddr(h.ServerAddr)
	if t.Opt.Verbose && !t.ServerSide {
		writeVerboseStart(l, h)
	}
	switch {
	case t.ServerSide && len(h.Streams) > 0:
		client, _ := splitAddr(h.Streams[0].LocalAddr)
		l.add("Accepted connection from %s", client)
	case t.ServerSide:
		l.add("Accepted a connection")
	case port != "":
		l.add("Connecting to host %s, port %s", host, port)
	default:
		l.add("Connecting to %s", host)
	}
	switch {
	case h.Spec.Bidir:
		l.add("Bidirectional mode: client and server both send; [TX-C] marks the client sending, [RX-C] the client receiving")
	case h.Spec.Reverse && t.ServerSide:
		l.add("Reverse mode, this server is sending")
	case h.Spec.Reverse:
		l.add("Reverse mode, remote host %s is sending", host)
	}
	if t.Opt.Verbose {
		l.add("Test: %s", describeSpec(h.Spec))
	}
	for _, s := range h.Streams {
		// A Header's streams are the client's; the server's own report
		// names its own address local, as iperf2's and iperf3's servers do.
		local, remote := s.LocalAddr, s.RemoteAddr
		if t.ServerSide {
			local, remote = remote, local
		}
		l.add("%s local %s connected to %s", flowTag(s.ID, clientOrServer(s.Sender), h.Spec.Bidir),
			describeAddr(local), describeAddr(remote))
	}
	writeBufferLines(l, h)
	if t.Opt.Verbose && !t.ServerSide {
		l.add("%s", startingTest(h.Spec))
	}
	return l.writeTo(t.W)
}

// writeVerboseStart writes iperf3's -V lines before "Connecting to":
// the version, the system, and the time the test started.
func writeVerboseStart(l *textLines, h Header) {
	v := h.Local.Host.Version
	if v == "" {
		v = "wireperf"
	} else if !strings.HasPrefix(v, "wireperf") {
		v = "wireperf " + v
	}
	l.add("%s", v)
	if h.Local.Host.System != "" {
		l.add("%s", h.Local.Host.System)
	}
	if h.ControlMSS > 0 {
		l.add("Control connection MSS %d", h.ControlMSS)
	}
	if !h.StartedAt.IsZero() {
		l.add("Time: %s", h.StartedAt.UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT"))
	}
}

// startingTest is iperf3's -V line that opens the test.
func startingTest(s spec.Spec) string {
	length := "second test"
	amount := int64(s.Measured().Round(time.Second) / time.Second)
	if s.Duration <= 0 && s.Bytes > 0 {
		length, amount = "bytes to send", s.Bytes
	}
	return fmt.Sprintf("Starting Test: protocol: %s, %d streams, %d byte blocks, omitting %d seconds, %d %s, tos %d",
		strings.ToUpper(s.Protocol), max(s.Streams, 1), s.Length, int64(s.Omit.Round(time.Second)/time.Second), amount, length, s.TOS)
}

// clientOrServer names the sending role from a client-sends flag.
func clientOrServer(clientSends bool) string {
	if clientSends {
		return "client"
	}
	return "server"
}

// describeSpec states the test's parameters in one line.
func describeSpec(s spec.Spec) string {
	var parts []string
	parts = append(parts, strings.ToUpper(s.Protocol), plural(s.Streams, "stream"))
	if isUDP(s) {
		parts = append(parts, fmt.Sprintf("%d-byte datagrams", s.Length))
	} else {
		parts = append(parts, fmt.Sprintf("%d-byte writes", s.Length))
	}
	if s.Duration > 0 {
		parts = append(parts, fmt.Sprintf("%v", s.Measured()))
	}
	if s.Bytes > 0 {
		parts = append(parts, fmt.Sprintf("until %d bytes per direction", s.Bytes))
	}
	if s.Omit > 0 {
		parts = append(parts, fmt.Sprintf("after %v omitted", s.Omit))
	}
	if s.Window > 0 {
		parts = append(parts, fmt.Sprintf("socket buffers %d bytes requested", s.Window))
	}
	if s.MSS > 0 {
		parts = append(parts, fmt.Sprintf("MSS %d requested", s.MSS))
	}
	if s.Congestion != "" {
		parts = append(parts, "congestion control "+s.Congestion)
	}
	if s.NoDelay {
		parts = append(parts, "no delay")
	}
	if isUDP(s) {
		parts = append(parts, describeUDP(s)...)
	}
	parts = append(parts, fmt.Sprintf("tos %d", s.TOS))
	return strings.Join(parts, ", ")
}

// plural writes "1 stream", "2 streams".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
