package proto

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/units"
)

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	want := TestRequest{Spec: spec.Default()}
	want.Spec.Streams = 4
	want.Spec.Title = "seacom"
	if err := WriteFrame(&buf, TypeTestRequest, want); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFrame(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if f.Type != TypeTestRequest {
		t.Fatalf("type = %v, want %v", f.Type, TypeTestRequest)
	}
	var got TestRequest
	if err := f.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Spec, want.Spec) {
		t.Fatalf("spec = %+v, want %+v", got.Spec, want.Spec)
	}
}

func frameBytes(length uint32, typ byte, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, length)
	b = append(b, typ)
	return append(b, body...)
}

func TestReadFrameRejects(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty input", nil, io.EOF},
		{"short length", []byte{0, 0}, io.ErrUnexpectedEOF},
		{"zero length", frameBytes(0, 1, nil), ErrEmptyFrame},
		{"huge length", frameBytes(0xffffffff, 1, nil), ErrFrameTooBig},
		{"just over the cap", frameBytes(MaxFrame+1, 1, nil), ErrFrameTooBig},
		{"truncated body", frameBytes(10, 1, []byte("{}")), io.ErrUnexpectedEOF},
		{"missing type", binary.BigEndian.AppendUint32(nil, 3), io.ErrUnexpectedEOF},
		{"unknown type", frameBytes(3, 200, []byte("{}")), ErrUnknownType},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadFrame(bytes.NewReader(tc.in))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestWriteFrameRefusesOversize(t *testing.T) {
	big := make([]byte, MaxFrame)
	err := WriteFrame(io.Discard, TypeError, Error{Message: string(big)})
	if !errors.Is(err, ErrFrameTooBig) {
		t.Fatalf("err = %v, want ErrFrameTooBig", err)
	}
}

func TestGreeting(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteGreeting(&buf, MagicControl); err != nil {
		t.Fatal(err)
	}
	raw := append([]byte(nil), buf.Bytes()...)
	if v, err := ReadGreeting(&buf, MagicControl); err != nil || v != Version {
		t.Fatalf("ReadGreeting = %d, %v", v, err)
	}
	if _, err := ParseGreeting(raw, MagicServer); !errors.Is(err, ErrBadMagic) {
		t.Fatalf("wrong magic: err = %v", err)
	}
	raw[5] = VersionIsochronous
	if v, err := ParseGreeting(raw, MagicControl); err != nil || v != VersionIsochronous {
		t.Fatalf("version 2: %d, %v", v, err)
	}
	raw[5] = 99
	if _, err := ParseGreeting(raw, MagicControl); !errors.Is(err, ErrWrongVersion) {
		t.Fatalf("wrong version: err = %v", err)
	}
	if _, err := ParseGreeting(raw[:3], MagicControl); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short: err = %v", err)
	}
}

func TestDataHello(t *testing.T) {
	h := DataHello{StreamID: 7}
	h.Token[0], h.Token[15] = 0xab, 0xcd
	got, err := ParseDataHello(h.Marshal())
	if err != nil || got != h {
		t.Fatalf("round trip = %+v, %v", got, err)
	}
	tok, err := ParseToken(h.Token.String())
	if err != nil || tok != h.Token {
		t.Fatalf("token round trip = %v, %v", tok, err)
	}
	for _, bad := range []string{"", "zz", "abcd", h.Token.String() + "00"} {
		if _, err := ParseToken(bad); err == nil {
			t.Errorf("ParseToken(%q) accepted", bad)
		}
	}
	raw := h.Marshal()
	raw[0] = 'x'
	if _, err := ParseDataHello(raw); !errors.Is(err, ErrBadMagic) {
		t.Fatalf("bad magic: err = %v", err)
	}
	if _, err := ParseDataHello(raw[:DataHelloLen-1]); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short: err = %v", err)
	}
}

// A request's format is the client's -f when it is one; absent (every
// request before the field) or unknown, the server's default.
func TestTestRequestFormat(t *testing.T) {
	for _, tc := range []struct {
		body string
		want units.Format
	}{
		{`{"spec":{},"format":"b"}`, 'b'},
		{`{"spec":{},"format":"K"}`, 'K'},
		{`{"spec":{},"server_output":true}`, 0},
		{`{"spec":{},"format":"x"}`, 0},
		{`{"spec":{},"format":"bb"}`, 0},
		{`{"spec":{},"format":""}`, 0},
	} {
		var r TestRequest
		if err := json.Unmarshal([]byte(tc.body), &r); err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		if got := r.OutputFormat(); got != tc.want {
			t.Errorf("%s: format %q, want %q", tc.body, byte(got), byte(tc.want))
		}
	}
	// Without a format the request is what it was before the field.
	b, err := json.Marshal(TestRequest{ServerOutput: true})
	if err != nil || strings.Contains(string(b), "format") {
		t.Errorf("a request without a format: %s, %v", b, err)
	}
}

// TestStreamTOSRoundTrip: a TOS per stream crosses the wire as a list
// of numbers and comes back as sent; the acceptance's promise too; a
// request without one is what it was before the field; and a hostile
// list is what Validate refuses.
func TestStreamTOSRoundTrip(t *testing.T) {
	req := TestRequest{Spec: spec.Default()}
	req.Spec.Streams, req.Spec.Bidir, req.Spec.StreamTOS = 4, true, []int{0x00, 0x20, 0xa0, 0xb8}
	var buf bytes.Buffer
	if err := WriteFrame(&buf, TypeTestRequest, req); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"stream_tos":[0,32,160,184]`) {
		t.Errorf("the request's body %q: want stream_tos as a list of numbers", buf.Bytes()[5:])
	}
	if err := WriteFrame(&buf, TypeTestAccept, TestAccept{Token: "ab", StreamTOS: true}); err != nil {
		t.Fatal(err)
	}
	fr, err := ReadFrame(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var got TestRequest
	if err := fr.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if err := got.Spec.Validate(); err != nil {
		t.Fatalf("the spec as read: %v", err)
	}
	for id := 1; id <= req.Spec.DataConns(); id++ {
		if got.Spec.TOSOn(id) != req.Spec.TOSOn(id) {
			t.Errorf("stream %d: TOS %#x as read, %#x as sent", id, got.Spec.TOSOn(id), req.Spec.TOSOn(id))
		}
	}
	fr, err = ReadFrame(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var acc TestAccept
	if err := fr.Decode(&acc); err != nil || !acc.StreamTOS {
		t.Errorf("the acceptance as read: %+v, %v; want its stream_tos", acc, err)
	}
	for _, v := range []any{TestRequest{Spec: spec.Default()}, TestAccept{Token: "ab"}} {
		if b, _ := json.Marshal(v); strings.Contains(string(b), "stream_tos") {
			t.Errorf("%s: stream_tos without a TOS per stream", b)
		}
	}
	for body, want := range map[string]string{
		`{"spec":{"protocol":"tcp","streams":2,"duration_ns":1000000000,"length":1024,"stream_tos":[0,256]}}`:      "the TOS of stream 2: 256",
		`{"spec":{"protocol":"tcp","streams":2,"duration_ns":1000000000,"length":1024,"stream_tos":[0,32,64]}}`:    "3 given for -P 2",
		`{"spec":{"protocol":"udp","streams":1,"duration_ns":1000000000,"length":1024,"stream_tos":[32]}}`:         "applies to TCP",
		`{"spec":{"protocol":"tcp","streams":1,"duration_ns":1000000000,"length":1024,"tos":8,"stream_tos":[32]}}`: "choose one",
	} {
		var r TestRequest
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if err := r.Spec.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Validate = %v, want it to say %q", body, err, want)
		}
	}
	var r TestRequest
	if err := json.Unmarshal([]byte(`{"spec":{"stream_tos":[1e3]}}`), &r); err == nil {
		t.Errorf("a TOS that is no integer decoded as %v", r.Spec.StreamTOS)
	}
}
