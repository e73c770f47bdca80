// Package testline reads a scheduled test's line ("client -t 10 -P 4")
// into a checked value, and turns it back into the arguments the daemon
// runs. A test line is data, never a command line: it comes from a mesh
// file, the HTTP API or another host's rows in a shared archive, and the
// daemon that runs it is often root. So a line names one of the
// measurement commands, and carries only the flags that shape the
// measurement (declared in package testflags); its values are checked for what they may hold,
// and the arguments built from it bind every value to its flag and end
// with the destination after "--", where nothing can read it as a flag or
// a subcommand.
package testline

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"unicode"

	"github.com/wireperf/wireperf/internal/measure/testflags"
	"github.com/wireperf/wireperf/internal/spec"
)

// Commands are the commands a test line may start with.
var Commands = []string{"client", "rr", "udpmon", "trace", "ping", "tcp-connect"}

// Limits of a line.
const (
	MaxWords    = 64  // words in a line
	MaxValueLen = 256 // bytes in one flag's value
)

// Flag is one flag of a line, by its long name.
type Flag struct {
	Name  string
	Value string // "true" or "false" for a boolean flag
}

// Line is a checked test line.
type Line struct {
	Command string
	Flags   []Flag // in the order given
}

// Split reads a test line's text into words: plain words separated by
// blanks, with no quotes or shell characters (nothing is ever given to a
// shell, and a quote would suggest otherwise).
func Split(s string) ([]string, error) {
	if strings.ContainsAny(s, `"'\`+"`$;|&<>(){}") {
		return nil, errors.New("quotes and shell characters are not taken: give plain words")
	}
	words := strings.Fields(s)
	if len(words) == 0 {
		return nil, errors.New("empty")
	}
	return words, nil
}

// Parse checks a test line's words: the command, then its allowed flags
// with their values. Each error names the word it is about.
func Parse(words []string) (Line, error) {
	if len(words) == 0 {
		return Line{}, errors.New("empty")
	}
	if len(words) > MaxWords {
		return Line{}, fmt.Errorf("%d words, over the limit of %d", len(words), MaxWords)
	}
	l := Line{Command: words[0]}
	if testflags.Of(words[0]) == nil {
		return Line{}, fmt.Errorf("%q: a test starts with client, rr, udpmon, trace, ping or tcp-connect", clip(words[0]))
	}
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--" || w == "-" || !strings.HasPrefix(w, "-"):
			return Line{}, fmt.Errorf("%q: a test line takes flags only (the destination comes from the task)", clip(w))
		case strings.HasPrefix(w, "--"):
			name, val, hasVal := strings.Cut(w[2:], "=")
			f, err := lookup(l.Command, name, "--"+name)
			if err != nil {
				return Line{}, err
			}
			switch {
			case f.Kind == testflags.Bool || hasVal:
			case f.NoOpt != "":
				// Given alone it takes its default, as on the command
				// line (pflag's NoOptDefVal): a value needs --name=value.
				val, hasVal = f.NoOpt, true
			default:
				if i+1 >= len(words) {
					return Line{}, fmt.Errorf("--%s: needs a value", name)
				}
				i++
				val, hasVal = words[i], true
			}
			v, err := checkValue(name, f.Kind, val, hasVal)
			if err != nil {
				return Line{}, err
			}
			l.Flags = append(l.Flags, Flag{name, v})
		default:
			// -X, -Xvalue, -X=value, -X value, or booleans together (-uR).
			rest := w[1:]
			for rest != "" {
				sh := rest[:1]
				rest = rest[1:]
				name, f, err := lookupShort(l.Command, sh)
				if err != nil {
					return Line{}, err
				}
				if f.Kind == testflags.Bool {
					if strings.HasPrefix(rest, "=") {
						v, err := checkValue(name, testflags.Bool, rest[1:], true)
						if err != nil {
							return Line{}, err
						}
						l.Flags = append(l.Flags, Flag{name, v})
						rest = ""
						break
					}
					l.Flags = append(l.Flags, Flag{name, "true"})
					continue
				}
				var val string
				switch {
				case strings.HasPrefix(rest, "="):
					val, rest = rest[1:], ""
				case f.NoOpt != "":
					// Its default, and what follows is more
					// shorthands, as pflag reads it.
					val = f.NoOpt
				case rest != "":
					val, rest = rest, ""
				default:
					if i+1 >= len(words) {
						return Line{}, fmt.Errorf("-%s: needs a value", sh)
					}
					i++
					val = words[i]
				}
				v, err := checkValue(name, f.Kind, val, true)
				if err != nil {
					return Line{}, err
				}
				l.Flags = append(l.Flags, Flag{name, v})
			}
		}
	}
	return l, nil
}

func lookup(command, name, as string) (testflags.Flag, error) {
	if f, ok := testflags.Lookup(command, name); ok {
		return f, nil
	}
	if why, ok := testflags.Refused(name); ok {
		return testflags.Flag{}, fmt.Errorf("%s: %s", as, why)
	}
	return testflags.Flag{}, fmt.Errorf("%s: not a measurement flag of %s", clip(as), command)
}

func lookupShort(command, sh string) (string, testflags.Flag, error) {
	if f, ok := testflags.LookupShort(command, sh); ok {
		return f.Name, f, nil
	}
	if long, ok := testflags.RefusedShort(sh); ok {
		why, _ := testflags.Refused(long)
		return "", testflags.Flag{}, fmt.Errorf("-%s: %s", sh, why)
	}
	return "", testflags.Flag{}, fmt.Errorf("-%s: not a measurement flag of %s", clip(sh), command)
}

// checkValue checks that a value holds only what its kind may hold. The
// command's own flag parsing checks it further when the test runs (and
// when a task is added through the CLI).
func checkValue(name string, kind testflags.Kind, v string, given bool) (string, error) {
	bad := func(want string) (string, error) {
		return "", fmt.Errorf("--%s: %q: want %s", name, clip(v), want)
	}
	if kind == testflags.Bool {
		if !given {
			return "true", nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return bad("true or false")
		}
		return strconv.FormatBool(b), nil
	}
	if v == "" {
		return bad("a value")
	}
	if len(v) > MaxValueLen {
		return "", fmt.Errorf("--%s: %d bytes, over the limit of %d", name, len(v), MaxValueLen)
	}
	if strings.HasPrefix(v, "-") {
		// No value of a measurement flag is negative, and a value that
		// looks like a flag is one the user left out.
		return bad("a value, not a flag")
	}
	switch kind {
	case testflags.Duration, testflags.Size, testflags.Int:
		if !only(v, "0123456789.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZµ") {
			return bad("a number with its unit")
		}
	case testflags.Rate:
		if !only(v, "0123456789.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ/") {
			return bad("a rate such as 750m or 10G/32")
		}
	case testflags.Word:
		if len(v) > 64 || !only(v, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.:") {
			return bad("a word of letters, digits, '_', '.' or ':'")
		}
	case testflags.List:
		if !only(v, "0123456789.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZµ,:") {
			return bad("a list such as 64,512 or 0:40us:1us")
		}
	case testflags.Text:
		if len(v) > spec.MaxTitleLength { // the wire's limit, the one every title meets
			return "", fmt.Errorf("--%s: %d bytes, over the limit of %d", name, len(v), spec.MaxTitleLength)
		}
		for _, r := range v {
			if !unicode.IsPrint(r) || unicode.IsSpace(r) {
				return bad("printable text")
			}
		}
	case testflags.Addr:
		a, err := netip.ParseAddr(v)
		if err != nil || a.Zone() != "" {
			return bad("an IP address of this host")
		}
		return a.String(), nil
	case testflags.Port:
		n, err := strconv.Atoi(v)
		if err != nil || n < 1024 || n > 65535 {
			return bad("a port from 1024 to 65535")
		}
		return strconv.Itoa(n), nil
	}
	return v, nil
}

func only(s, set string) bool {
	for _, r := range s {
		if !strings.ContainsRune(set, r) {
			return false
		}
	}
	return true
}

// clip shortens what an error quotes back.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Words is the line as canonical words: the command, then each flag as
// --name=value (--name for a true boolean). It reads back to the same
// Line.
func (l Line) Words() []string {
	out := make([]string, 0, 1+len(l.Flags))
	out = append(out, l.Command)
	for _, f := range l.Flags {
		if fl, _ := testflags.Lookup(l.Command, f.Name); fl.Kind == testflags.Bool && f.Value == "true" {
			out = append(out, "--"+f.Name)
			continue
		}
		out = append(out, "--"+f.Name+"="+f.Value)
	}
	return out
}

// String is the canonical words, joined by blanks.
func (l Line) String() string { return strings.Join(l.Words(), " ") }

// Value is the last value given for a flag, and whether it was given.
func (l Line) Value(name string) (string, bool) {
	for i := len(l.Flags) - 1; i >= 0; i-- {
		if l.Flags[i].Name == name {
			return l.Flags[i].Value, true
		}
	}
	return "", false
}

// Set is whether a boolean flag is set (given, and last given true).
func (l Line) Set(name string) bool {
	v, ok := l.Value(name)
	return ok && v == "true"
}

// Args is what the daemon runs for the line to a destination: the
// command, the flags bound to their values, the port, one JSON document,
// and the host after "--". A trace takes no port: the destination's is
// its server's, not one a probe goes to.
func (l Line) Args(dest Dest) []string {
	out := l.Words()
	if dest.Port != 0 && !probesOthers[l.Command] {
		out = append(out, "--port="+strconv.Itoa(dest.Port))
	}
	return append(out, "--json", "--", dest.Host)
}

// probesOthers are the commands that measure a host whatever it runs:
// the destination's port is its server's, not one they probe (a
// tcp-connect test names its own with --port).
var probesOthers = map[string]bool{"trace": true, "ping": true, "tcp-connect": true}

// Dest is where a test goes: a host name or an IP address, and a port
// (0: the command's default).
type Dest struct {
	Host string
	Port int
}

// MaxHostLen is the longest host name (RFC 1035's 253).
const MaxHostLen = 253

// ParseDest reads HOST, HOST:PORT or [IPv6]:PORT. A host is an IP address
// or a DNS name of letters, digits, '-' and '.', so it can never read as
// a flag or a command.
func ParseDest(s string) (Dest, error) {
	host, port := s, ""
	if h, p, err := net.SplitHostPort(s); err == nil {
		host, port = h, p
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		host = s[1 : len(s)-1]
	}
	var d Dest
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return Dest{}, fmt.Errorf("%q: the port must be 1 to 65535", clip(s))
		}
		d.Port = n
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return Dest{}, fmt.Errorf("%q: an address with a zone is not taken", clip(s))
		}
		d.Host = a.String()
		return d, nil
	}
	if err := CheckHostName(host); err != nil {
		return Dest{}, fmt.Errorf("%q: %v", clip(s), err)
	}
	d.Host = host
	return d, nil
}

// CheckHostName checks a host's name: labels of letters, digits, '-' and
// '_' (which /etc/hosts and some zones use), none starting or ending
// with '-', joined by '.'.
func CheckHostName(h string) error {
	if h == "" {
		return errors.New("empty host")
	}
	if len(h) > MaxHostLen {
		return fmt.Errorf("a host name of %d bytes, over the limit of %d", len(h), MaxHostLen)
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return errors.New("not a host name or an IP address")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return errors.New("not a host name or an IP address")
			}
		}
	}
	return nil
}

// CheckBind checks that a line's --bind, if any, is one of the given
// addresses: this host's own. The daemon checks it before each run,
// since only the host that runs the test knows its addresses.
func (l Line) CheckBind(local []netip.Addr) error {
	v, ok := l.Value("bind")
	if !ok {
		return nil
	}
	a, err := netip.ParseAddr(v)
	if err != nil {
		return fmt.Errorf("--bind: %q: not an IP address", clip(v))
	}
	for _, h := range local {
		if h.Unmap() == a.Unmap() {
			return nil
		}
	}
	return fmt.Errorf("--bind: %s: not an address of this host", a)
}
