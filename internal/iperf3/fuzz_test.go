package iperf3

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/wireperf/wireperf/internal/iperf3/iperf3wire"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

func FuzzReadMessage(f *testing.F) {
	f.Add([]byte{0, 0, 0, 2, '{', '}'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		msg, err := ReadMessage(bytes.NewReader(b), 4096)
		if err == nil && (len(msg) == 0 || len(msg) > 4096 || len(msg) > len(b)) {
			t.Fatalf("message of %d bytes from %d", len(msg), len(b))
		}
	})
}

func FuzzParams(f *testing.F) {
	f.Add([]byte(capturedParams))
	f.Add([]byte(`{"udp":true,"time":1,"len":1400,"bandwidth":1e+16,"burst":5,"udp_counters_64bit":1}`))
	f.Add([]byte(`{"tcp":true,"parallel":-5,"time":-1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var p Params
		if json.Unmarshal(b, &p) != nil {
			return
		}
		s, err := p.Spec()
		if err != nil {
			return
		}
		if s.Validate() != nil {
			t.Fatalf("Spec() returned an invalid spec %+v", s)
		}
		if s.DataConns() < 1 || s.Length < 1 {
			t.Fatalf("spec %+v", s)
		}
	})
}

func FuzzResults(f *testing.F) {
	f.Add([]byte(capturedResults))
	f.Add([]byte(`{"cpu_util_total":null,"cpu_util_user":1,"cpu_util_system":1,"sender_has_retransmits":1,"streams":[{"id":2}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Results
		if json.Unmarshal(b, &r) != nil {
			return
		}
		_ = r.present(b)
		local := []result.Stream{{ID: 1, Sender: true}, {ID: 2}}
		for _, proto := range []string{spec.TCP, spec.UDP} {
			e := remoteEnd(result.RoleServer, result.Host{}, r, spec.Spec{Protocol: proto}, local)
			if len(e.Streams) > len(r.Streams) {
				t.Fatal("more streams than reported")
			}
			for _, st := range e.Streams {
				if st.UDP != nil && (st.UDP.Lost < 0 || st.UDP.Received < 0 || st.UDP.Expected < 0) {
					t.Fatalf("negative UDP figures %+v", *st.UDP)
				}
			}
		}
	})
}

func FuzzUDPHeader(f *testing.F) {
	f.Add([]byte{0, 0, 5, 9, 0, 3, 0x59, 0xb1, 0, 0, 0, 1}, false)
	f.Add(make([]byte, 16), true)
	f.Fuzz(func(t *testing.T, b []byte, c64 bool) {
		h, err := ParseUDPHeader(b, c64)
		if err != nil {
			if len(b) >= HeaderLen(c64) {
				t.Fatal("refused a datagram long enough")
			}
			return
		}
		out := make([]byte, HeaderLen(c64))
		PutUDPHeader(out, h, c64)
		if !bytes.Equal(out, b[:HeaderLen(c64)]) {
			t.Fatalf("header does not round-trip: %x -> %x", b[:HeaderLen(c64)], out)
		}
		_ = IsUDPConnect(b)
		_ = IsUDPConnectReply(b)
	})
}

func FuzzCookieAndState(f *testing.F) {
	c := NewCookie()
	f.Add(c[:])
	f.Add([]byte("WPRC\x00\x01\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if ValidCookie(b) && (!CookiePrefix(b) || len(b) != CookieLen) {
			t.Fatal("valid cookie is not a prefix of itself")
		}
		if len(b) > 0 {
			s, err := ParseState(b[0])
			if (err == nil) != s.Known() {
				t.Fatal("ParseState and Known disagree")
			}
			_ = iperf3wire.LooksLikeIperf3Reply(b)
		}
		if len(b) < CookieLen {
			ck := cookieAfter(b)
			if !bytes.HasPrefix(ck[:], b) || ck[CookieLen-1] != 0 && len(b) < CookieLen-1 {
				t.Fatalf("cookieAfter(%q) = %q", b, ck[:])
			}
		}
	})
}
