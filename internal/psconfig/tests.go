package psconfig

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// endpoint is where a test's source or destination comes from: one of
// the group's addresses (by index), or a host named outright.
type endpoint struct {
	index   int // 0 or 1; -1 for a literal
	literal string
}

// test is a template's test as a mesh test line, with where its two ends
// come from.
type test struct {
	name       string
	kind       string // the pSConfig type
	line       []string
	background bool
	source     endpoint
	dest       endpoint
	// defaultRepeat is the repeat of a task with no schedule (latencybg
	// runs without pause in perfSONAR); 0 means "run once".
	defaultRepeat time.Duration
}

var templateRef = regexp.MustCompile(`^\{%\s*(address|pscheduler_address|lead_bind_address)\[([01])\]\s*%\}$`)

// safeWord is a value a test line may carry as one word: nothing a
// tokenizer could split or read as a flag.
var safeWord = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,63}$`)

// spec reads a test's spec fields, warning of those it doesn't carry.
type spec struct {
	c      *converter
	test   string
	kind   string
	fields map[string]json.RawMessage
	used   map[string]bool
	err    error
}

func (s *spec) has(k string) bool { _, ok := s.fields[k]; return ok }

func (s *spec) fail(k, format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("tests.%s.spec.%s: %s", s.test, k, fmt.Sprintf(format, args...))
	}
}

// templated says whether a field is a jq or pSConfig template, which is
// evaluated per task in perfSONAR and can't be carried.
func (s *spec) templated(k string) bool {
	var str string
	if json.Unmarshal(s.fields[k], &str) == nil && strings.Contains(str, "{%") {
		s.c.w.dropped("templated spec fields", s.test+"."+k, "pSConfig templates other than {% address[N] %} are not evaluated; the field is left out")
		s.used[k] = true
		return true
	}
	return false
}

func (s *spec) number(k string, min, max float64) (float64, bool) {
	if !s.has(k) || s.templated(k) {
		return 0, false
	}
	s.used[k] = true
	var v float64
	if err := json.Unmarshal(s.fields[k], &v); err != nil || math.IsNaN(v) || v < min || v > max {
		s.fail(k, "want a number from %g to %g", min, max)
		return 0, false
	}
	return v, true
}

func (s *spec) integer(k string, min, max int64) (int64, bool) {
	v, ok := s.number(k, float64(min), float64(max))
	if ok && v != math.Trunc(v) {
		s.fail(k, "want a whole number")
		return 0, false
	}
	return int64(v), ok
}

func (s *spec) boolean(k string) bool {
	if !s.has(k) || s.templated(k) {
		return false
	}
	s.used[k] = true
	var v bool
	if err := json.Unmarshal(s.fields[k], &v); err != nil {
		s.fail(k, "want true or false")
	}
	return v
}

func (s *spec) word(k string) (string, bool) {
	if !s.has(k) || s.templated(k) {
		return "", false
	}
	s.used[k] = true
	var v string
	if err := json.Unmarshal(s.fields[k], &v); err != nil || !safeWord.MatchString(v) {
		s.fail(k, "want a short word of letters, digits, '.', '_' or '-'")
		return "", false
	}
	return v, true
}

// duration reads an ISO 8601 duration field (a number of seconds too,
// as some pScheduler specs write them).
func (s *spec) duration(k string) (time.Duration, bool) {
	if !s.has(k) || s.templated(k) {
		return 0, false
	}
	s.used[k] = true
	var str string
	if json.Unmarshal(s.fields[k], &str) == nil {
		d, err := ParseDuration(str)
		if err != nil {
			s.fail(k, "%v", err)
			return 0, false
		}
		return d, true
	}
	var secs float64
	if err := json.Unmarshal(s.fields[k], &secs); err != nil || math.IsNaN(secs) || secs < 0 || secs > maxDuration.Seconds() {
		s.fail(k, "want an ISO 8601 duration such as PT30S")
		return 0, false
	}
	return time.Duration(secs * float64(time.Second)), true
}

// endpointOf reads source or dest: a group's address by its template, or
// a host named outright.
func (s *spec) endpointOf(k string, def endpoint) endpoint {
	if !s.has(k) {
		return def
	}
	s.used[k] = true
	var str string
	if err := json.Unmarshal(s.fields[k], &str); err != nil {
		s.fail(k, "want an address or {%% address[N] %%}")
		return def
	}
	if m := templateRef.FindStringSubmatch(str); m != nil {
		if m[1] != "address" {
			s.c.w.dropped(m[1]+" templates", s.test+"."+k, "the mesh host's own address is used")
		}
		i, _ := strconv.Atoi(m[2])
		return endpoint{index: i}
	}
	if strings.Contains(str, "{%") {
		s.fail(k, "%s: only {%% address[0] %%} and {%% address[1] %%} are understood", strconv.Quote(str))
		return def
	}
	if err := checkAddr(str); err != nil {
		s.fail(k, "%v", err)
		return def
	}
	return endpoint{index: -1, literal: str}
}

// leftovers warns of every spec field the conversion didn't read.
func (s *spec) leftovers(why map[string]string) {
	for _, k := range sortedKeys(s.fields) {
		if s.used[k] {
			continue
		}
		reason, ok := why[k]
		if !ok {
			reason = "no wireperf equivalent"
		}
		s.c.w.dropped(fmt.Sprintf("%s spec %q", s.kind, k), s.test, reason)
	}
}

// seconds is a duration as a test line's value: whole seconds as a bare
// number (as iperf writes -t 30), else Go's form (1.5s, 100ms).
func seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10)
	}
	return d.String()
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// readTest converts one template test; nil (with a warning) when its type
// has no wireperf test.
func (c *converter) readTest(name string, raw json.RawMessage) (*test, error) {
	var t struct {
		Type string                     `json:"type"`
		Spec map[string]json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("tests.%s: want {\"type\": …, \"spec\": {…}}", name)
	}
	s := &spec{c: c, test: name, kind: t.Type, fields: t.Spec, used: map[string]bool{}}
	if s.fields == nil {
		s.fields = map[string]json.RawMessage{}
	}
	out := &test{name: name, kind: t.Type}
	out.source = s.endpointOf("source", endpoint{index: 0})
	out.dest = s.endpointOf("dest", endpoint{index: 1})
	var why map[string]string
	switch t.Type {
	case "throughput":
		out.line, why = throughputLine(s)
	case "rtt":
		out.line, why = rttLine(s)
		out.background = true
	case "latencybg", "latency":
		out.line, why = latencyLine(s)
		out.background = true
		if t.Type == "latencybg" {
			out.defaultRepeat = 5 * time.Minute
		}
	case "trace":
		out.line, why = traceLine(s)
		out.background = true
	default:
		c.w.dropped("test types", fmt.Sprintf("%s (%s)", name, t.Type), "no wireperf test of that type; its tasks are left out")
		return nil, nil
	}
	if s.err != nil {
		return nil, s.err
	}
	s.leftovers(why)
	return out, nil
}

// throughputLine maps pScheduler's throughput spec to the client's flags
// (the iperf3 flags pScheduler's own tool passes).
func throughputLine(s *spec) ([]string, map[string]string) {
	line := []string{"client"}
	flag := func(f string, v string) { line = append(line, f, v) }
	if d, ok := s.duration("duration"); ok {
		flag("-t", seconds(d))
	}
	if d, ok := s.duration("interval"); ok {
		flag("-i", seconds(d))
	}
	if v, ok := s.integer("parallel", 1, 128); ok {
		flag("-P", strconv.FormatInt(v, 10))
	}
	udp := s.boolean("udp")
	if udp {
		line = append(line, "-u")
	}
	if v, ok := s.integer("bandwidth", 0, 1e13); ok {
		rate := strconv.FormatInt(v, 10)
		if b, ok := s.integer("burst-size", 1, 1<<20); ok {
			rate += "/" + strconv.FormatInt(b, 10)
		}
		flag("-b", rate)
	}
	if v, ok := s.integer("window-size", 1, 1<<31); ok {
		flag("-w", strconv.FormatInt(v, 10))
	}
	if v, ok := s.integer("buffer-length", 1, 1<<30); ok {
		flag("-l", strconv.FormatInt(v, 10))
	}
	if v, ok := s.integer("mss", 88, 65535); ok {
		flag("-M", strconv.FormatInt(v, 10))
	}
	if d, ok := s.duration("omit"); ok && d > 0 {
		flag("-O", seconds(d))
	}
	if s.boolean("reverse") {
		line = append(line, "-R")
	}
	if v, ok := s.word("congestion"); ok {
		flag("-C", v)
	}
	if v, ok := s.integer("ip-tos", 0, 255); ok {
		flag("-S", strconv.FormatInt(v, 10))
	}
	if v, ok := s.integer("dscp", 0, 63); ok {
		flag("--dscp", strconv.FormatInt(v, 10))
	}
	line = append(line, s.ipVersion()...)
	if s.boolean("zero-copy") {
		line = append(line, "-Z")
	}
	if v, ok := s.integer("flow-label", 1, 0xfffff); ok {
		if udp {
			s.c.w.dropped(`throughput spec "flow-label" with udp`, s.test, "the client labels TCP data connections only")
		} else {
			flag("-L", strconv.FormatInt(v, 10))
		}
	}
	if v, ok := s.integer("fq-rate", 1, 1e13); ok {
		flag("--fq-rate", strconv.FormatInt(v, 10))
	}
	if s.boolean("no-delay") {
		line = append(line, "-N")
	}
	return line, map[string]string{
		"single-ended":        "every mesh host runs a wireperf daemon; single-ended tests to a bare iperf3 server are not scheduled",
		"single-ended-port":   "every mesh host runs a wireperf daemon",
		"loopback":            "a mesh tests between hosts",
		"reverse-connections": "the client always connects to the server",
		"local-address":       "a daemon binds to its host's address",
		"client-cpu-affinity": "CPU pinning is the host's choice, not the mesh's",
		"server-cpu-affinity": "CPU pinning is the host's choice, not the mesh's",
		"bandwidth-strict":    "pacing is always strict",
		"source-node":         "no mesh equivalent",
		"dest-node":           "no mesh equivalent",
	}
}

// rttLine maps pScheduler's rtt (ICMP echo) spec to the ping command's
// flags.
func rttLine(s *spec) ([]string, map[string]string) {
	line := []string{"ping"}
	flag := func(f string, v string) { line = append(line, f, v) }
	if v, ok := s.integer("count", 1, 65535); ok {
		flag("--count", strconv.FormatInt(v, 10))
	}
	if d, ok := s.duration("interval"); ok {
		flag("--interval", d.String())
	}
	if v, ok := s.integer("length", 0, 65000); ok {
		flag("--size", strconv.FormatInt(v, 10))
	}
	if d, ok := s.duration("timeout"); ok {
		flag("--timeout", d.String())
	}
	line = append(line, s.ipVersion()...)
	return line, map[string]string{
		"ttl":               "ping sends with the host's default TTL",
		"deadline":          "the count and interval bound a run",
		"hostnames":         "addresses are reported as they are",
		"suppress-loopback": "a mesh tests between hosts",
		"ip-tos":            "no ping option",
		"flowlabel":         "no ping option",
		"fragment":          "no ping option",
		"protocol":          "ping is ICMP echo",
		"source-node":       "no mesh equivalent",
		"dest-node":         "no mesh equivalent",
	}
}

// latencyLine maps OWAMP's latency and latencybg specs to rr: UDP probes
// at a fixed interval, each one way timed, between two wireperf daemons.
func latencyLine(s *spec) ([]string, map[string]string) {
	line := []string{"rr", "--udp"}
	flag := func(f string, v string) { line = append(line, f, v) }
	count := int64(600) // powstream's session: 600 packets …
	interval := 100 * time.Millisecond
	if v, ok := s.integer("packet-count", 1, 1000000); ok {
		count = v
	}
	if v, ok := s.number("packet-interval", 0.0001, 3600); ok {
		interval = time.Duration(v * float64(time.Second))
	}
	flag("--interval", interval.String())
	flag("--count", strconv.FormatInt(count, 10))
	flag("-t", "0")
	if v, ok := s.integer("packet-padding", 0, 65000); ok && v+14 > 64 {
		flag("--sizes", strconv.FormatInt(v+14, 10)) // OWAMP's 14-byte header and the padding
	}
	if v, ok := s.number("packet-timeout", 0.001, 3600); ok {
		flag("--timeout", time.Duration(v*float64(time.Second)).String())
	}
	if v, ok := s.integer("ip-tos", 0, 255); ok {
		flag("--tos", strconv.FormatInt(v, 10))
	}
	return line, map[string]string{
		"bucket-width":    "wireperf keeps a full histogram",
		"output-raw":      "wireperf keeps a full histogram",
		"ip-version":      "rr follows the address the mesh gives",
		"flip":            "the source always sends the requests",
		"data-ports":      "rr uses the daemon's port",
		"ctrl-port":       "rr uses the daemon's port",
		"duration":        "the count and interval bound a run",
		"report-interval": "one result a run",
		"source-node":     "no mesh equivalent",
		"dest-node":       "no mesh equivalent",
	}
}

// traceLine maps pScheduler's trace spec to the trace command's flags.
func traceLine(s *spec) ([]string, map[string]string) {
	line := []string{"trace"}
	flag := func(f string, v string) { line = append(line, f, v) }
	if v, ok := s.integer("hops", 1, 64); ok {
		flag("--max-hops", strconv.FormatInt(v, 10))
	}
	if v, ok := s.integer("queries", 1, 10); ok {
		flag("--probes", strconv.FormatInt(v, 10))
	}
	if v, ok := s.word("probe-type"); ok {
		switch v {
		case "udp", "icmp":
			flag("--proto", v)
		default:
			s.c.w.dropped(`trace spec "probe-type"`, s.test+": "+v, "trace probes with udp or icmp; udp is used")
		}
	}
	if d, ok := s.duration("wait"); ok && d > 0 {
		flag("--probe-timeout", d.String())
	}
	return line, map[string]string{
		"first-ttl":   "a trace starts at the first hop",
		"length":      "probes are small",
		"sendwait":    "probes are sent at the rate the trace's bounds allow",
		"algorithm":   "one trace method",
		"as":          "addresses are not looked up",
		"hostnames":   "addresses are not looked up",
		"fragment":    "probes are small",
		"dest-port":   "udp probes go to an unlikely port",
		"ip-version":  "trace follows the address the mesh gives",
		"ip-tos":      "no trace option",
		"source-node": "no mesh equivalent",
		"dest-node":   "no mesh equivalent",
	}
}

// ipVersion is the spec's "ip-version" as our -4 or -6 flag: none when
// it is absent, and a failure for any number but 4 or 6.
func (s *spec) ipVersion() []string {
	v, ok := s.integer("ip-version", 4, 6)
	switch {
	case !ok:
		return nil
	case v == 4:
		return []string{"-4"}
	case v == 6:
		return []string{"-6"}
	}
	s.fail("ip-version", "want 4 or 6")
	return nil
}
