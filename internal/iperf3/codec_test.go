package iperf3

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/iperf3/iperf3wire"
	"github.com/wireperf/wireperf/internal/spec"
)

func TestCookie(t *testing.T) {
	seen := map[Cookie]bool{}
	for range 100 {
		c := NewCookie()
		if !ValidCookie(c[:]) {
			t.Fatalf("NewCookie %q is not valid", c[:])
		}
		if seen[c] {
			t.Fatal("repeated cookie")
		}
		seen[c] = true
		if len(c.String()) != 36 {
			t.Fatalf("String %q", c.String())
		}
	}
	bad := []string{
		"",
		strings.Repeat("a", 36),                   // no NUL
		strings.Repeat("a", 36) + "\x00x",         // too long
		strings.Repeat("a", 35) + "A\x00",         // upper case
		strings.Repeat("a", 35) + "1\x00",         // 1 is not in base32
		"WPRC" + strings.Repeat("a", 32) + "\x00", // our magic
	}
	for _, b := range bad {
		if ValidCookie([]byte(b)) {
			t.Errorf("ValidCookie(%q) = true", b)
		}
	}
	if CookiePrefix([]byte("WPRC")) || CookiePrefix([]byte("WPRD")) || !CookiePrefix([]byte("ab27")) {
		t.Error("CookiePrefix does not tell the protocols apart")
	}
}

func TestStates(t *testing.T) {
	wire := map[State]byte{
		TestStart: 1, TestRunning: 2, TestEnd: 4, ParamExchange: 9, CreateStreams: 10,
		ServerTerminate: 11, ClientTerminate: 12, ExchangeResults: 13, DisplayResults: 14,
		IperfStart: 15, IperfDone: 16, AccessDenied: 0xff, ServerError: 0xfe,
	}
	for s, b := range wire {
		var buf bytes.Buffer
		if err := WriteState(&buf, s); err != nil || !bytes.Equal(buf.Bytes(), []byte{b}) {
			t.Errorf("%v: wrote %v", s, buf.Bytes())
		}
		if got, err := ReadState(&buf); err != nil || got != s {
			t.Errorf("%v: read back %v, %v", s, got, err)
		}
	}
	for _, b := range []byte{0, 3, 5, 17, 'W', 0xfd} {
		if _, err := ParseState(b); err == nil {
			t.Errorf("ParseState(%d) accepted", b)
		}
	}
}

func TestMessages(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes()[:4], []byte{0, 0, 0, 7}) {
		t.Errorf("length prefix %v", buf.Bytes()[:4])
	}
	var m map[string]int
	if err := ReadJSON(&buf, MaxMessage, &m); err != nil || m["a"] != 1 {
		t.Errorf("read back %v, %v", m, err)
	}
	tests := []struct {
		in   []byte
		want error
	}{
		{[]byte{0xff, 0xff, 0xff, 0xff}, ErrMessageTooBig},
		{[]byte{0, 0x10, 0, 1}, ErrMessageTooBig},
		{[]byte{0, 0, 0, 9, '{'}, io.ErrUnexpectedEOF},
		{[]byte{0, 0}, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		if _, err := ReadMessage(bytes.NewReader(tt.in), MaxMessage); !errors.Is(err, tt.want) {
			t.Errorf("ReadMessage(%v) = %v; want %v", tt.in, err, tt.want)
		}
	}
}

// Parameters as iperf3 3.12 sends them (captured from the binary).
const capturedParams = `{"tcp":true,"omit":1,"time":1,"num":0,"blockcount":0,"MSS":1200,"nodelay":true,"parallel":1,"bidirectional":true,"window":262144,"len":131072,"bandwidth":100000000,"pacing_timer":1000,"TOS":16,"title":"hello","extra_data":"xyz","congestion":"reno","get_server_output":1,"client_version":"3.12"}`

func TestParamsToSpec(t *testing.T) {
	var p Params
	if err := json.Unmarshal([]byte(capturedParams), &p); err != nil {
		t.Fatal(err)
	}
	s, err := p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	want := spec.Spec{
		Protocol: spec.TCP, Streams: 1, Duration: 2 * time.Second, Omit: time.Second, Interval: time.Second,
		Bidir: true, Window: 262144, Length: 131072, MSS: 1200, NoDelay: true, Congestion: "reno",
		TOS: 16, Title: "hello", Rate: 100e6, ExtraData: "xyz", // --extra-data reaches our server's report
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("spec\n%+v\nwant\n%+v", s, want)
	}
	if p.GetServerOutput != 1 || p.ExtraData != "xyz" || p.ClientVersion != "3.12" {
		t.Errorf("params %+v", p)
	}
	// And back: the keys iperf3 needs, with the same values.
	back := ParamsFromSpec(s, false)
	if back.Time != 1 || back.Omit != 1 || !back.Bidirectional || back.Window != 262144 || back.Bandwidth != 100000000 || !back.TCP {
		t.Errorf("ParamsFromSpec = %s", back)
	}
	udp := ParamsFromSpec(spec.Spec{Protocol: spec.UDP, Streams: 2, Duration: 3 * time.Second, Length: 1400, Reverse: true}, true)
	if !udp.UDP || udp.Bandwidth != DefaultUDPRate || udp.UDPCounters64 != 1 || udp.Parallel != 2 || !udp.Reverse || udp.Time != 3 {
		t.Errorf("UDP params = %s", udp)
	}
	for _, bad := range []string{`{"sctp":true,"parallel":1,"time":1}`, `{"tcp":true,"parallel":1000,"time":1}`, `{"udp":true,"time":1,"len":8}`} {
		var p Params
		if err := json.Unmarshal([]byte(bad), &p); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Spec(); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	// Credentials are the server's to check (ServeConfig.Auth); a server
	// without them runs the test, as iperf3's does.
	var withToken Params
	if err := json.Unmarshal([]byte(`{"tcp":true,"time":1,"authtoken":"x"}`), &withToken); err != nil {
		t.Fatal(err)
	}
	if _, err := withToken.Spec(); err != nil {
		t.Errorf("parameters with an authtoken: %v", err)
	}
}

// Results as iperf3 3.12 sends them: a receiving stream's retransmits
// are -1 written unsigned.
const capturedResults = `{"cpu_util_total":19.60244022885875,"cpu_util_user":1.2114349563282836,"cpu_util_system":18.390705980356454,"sender_has_retransmits":18446744073709551615,"congestion_used":"bbr","streams":[{"id":1,"bytes":405012480,"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":1.002303},{"id":3,"bytes":406323200,"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":1.002303}]}`

func TestResults(t *testing.T) {
	var r Results
	if err := json.Unmarshal([]byte(capturedResults), &r); err != nil {
		t.Fatal(err)
	}
	if !r.present([]byte(capturedResults)) || r.SenderHasRetransmits != -1 || len(r.Streams) != 2 ||
		r.Streams[1].ID != 3 || r.Streams[0].Retransmits != -1 || r.Streams[1].Bytes != 406323200 || r.CongestionUsed != "bbr" {
		t.Errorf("decoded %+v", r)
	}
	if r.present([]byte(`{"streams":[]}`)) {
		t.Error("results without the CPU keys accepted")
	}
	for n, wire := range map[int]int{1: 1, 2: 3, 3: 4, 8: 9} {
		if wireStreamID(n) != wire || localStreamID(wire) != n {
			t.Errorf("stream %d: wire %d", n, wireStreamID(n))
		}
	}
	if localStreamID(2) != 0 || localStreamID(0) != 0 {
		t.Error("localStreamID accepts an ID iperf3 never uses")
	}
}

func TestInt(t *testing.T) {
	for in, want := range map[string]Int{
		"5": 5, "-1": -1, "18446744073709551615": -1, "1e+16": 1e16, "2.5": 2, "null": 0, "true": 1,
	} {
		var n Int
		if err := json.Unmarshal([]byte(in), &n); err != nil || n != want {
			t.Errorf("%s: %d, %v; want %d", in, n, err, want)
		}
	}
	var n Int
	if json.Unmarshal([]byte(`"x"`), &n) == nil {
		t.Error(`"x" accepted as a number`)
	}
}

func TestUDPWire(t *testing.T) {
	// The bytes iperf3 3.12 on amd64 was seen to send.
	if !IsUDPConnect([]byte("9876")) || !IsUDPConnectReply([]byte("6789")) {
		t.Error("observed connect bytes not recognised")
	}
	// A big-endian iperf3 sends the bytes swapped: "6789" out, "9876"
	// back. So either string is either message; only the length and the
	// direction tell them apart.
	if IsUDPConnect([]byte("98765")) || IsUDPConnect([]byte("9877")) || IsUDPConnectReply([]byte("abcd")) {
		t.Error("not a connect message, accepted")
	}
	legacy := binary.LittleEndian.AppendUint32(nil, 123456789)
	if !IsUDPConnect(legacy) || !IsUDPConnect(binary.BigEndian.AppendUint32(nil, 123456789)) {
		t.Error("legacy connect message not recognised")
	}
	for _, c64 := range []bool{false, true} {
		b := make([]byte, 64)
		h := UDPHeader{Sec: 1289, Usec: 219569, Seq: 7}
		PutUDPHeader(b, h, c64)
		got, err := ParseUDPHeader(b[:HeaderLen(c64)], c64)
		if err != nil || got != h {
			t.Errorf("64-bit %v: %+v, %v", c64, got, err)
		}
		if _, err := ParseUDPHeader(b[:HeaderLen(c64)-1], c64); err == nil {
			t.Error("short datagram accepted")
		}
	}
	// As captured: sec 0x509, usec 0x359b1, packet 1.
	h, _ := ParseUDPHeader([]byte{0, 0, 5, 9, 0, 3, 0x59, 0xb1, 0, 0, 0, 1}, false)
	if h.Sec != 1289 || h.Usec != 219569 || h.Seq != 1 {
		t.Errorf("captured header: %+v", h)
	}
}

func TestLooksLikeIperf3Reply(t *testing.T) {
	if !iperf3wire.LooksLikeIperf3Reply([]byte{0xff}) || !iperf3wire.LooksLikeIperf3Reply([]byte{9}) {
		t.Error("iperf3 answers not recognised")
	}
	if iperf3wire.LooksLikeIperf3Reply(nil) || iperf3wire.LooksLikeIperf3Reply([]byte("WPRS\x00\x01\x00\x00")) {
		t.Error("a wireperf answer taken for iperf3")
	}
	c := cookieAfter([]byte("WPRC\x00\x01\x00\x00"))
	if string(c[:8]) != "WPRC\x00\x01\x00\x00" || c[CookieLen-1] != 0 || !CookiePrefix(c[8:CookieLen-1]) {
		t.Errorf("cookieAfter = %q", c[:])
	}
}

func TestUDPRx(t *testing.T) {
	var r udpRx
	for _, seq := range []int64{1, 2, 4, 5, 3, 6} { // 3 late: counted lost, then taken back
		r.add(seq, seq*1000, seq*1000+500)
	}
	if r.maxSeq != 6 || r.lost != 0 || r.outOfOrder != 1 || r.jitter != 0 {
		t.Errorf("%+v", r)
	}
	r.add(10, 10000, 10000+500)
	if r.lost != 3 {
		t.Errorf("lost %d; want 3", r.lost)
	}
}
