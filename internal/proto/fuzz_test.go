package proto

import (
	"bytes"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/units"
)

// FuzzReadFrame feeds arbitrary bytes to the control decoder, as a hostile
// client would: it must never panic, never return a frame over the cap,
// and every message it accepts must decode or fail cleanly.
func FuzzReadFrame(f *testing.F) {
	var corpus bytes.Buffer
	_ = WriteFrame(&corpus, TypeTestRequest, TestRequest{Spec: spec.Default()})
	_ = WriteFrame(&corpus, TypeTestRequest, TestRequest{Spec: spec.Default(), ServerOutput: true, Format: "b"})
	withTOS := spec.Default()
	withTOS.Streams, withTOS.Bidir, withTOS.StreamTOS = 4, true, []int{0x00, 0x20, 0xa0, 0xb8}
	_ = WriteFrame(&corpus, TypeTestRequest, TestRequest{Spec: withTOS})
	_ = WriteFrame(&corpus, TypeTestAccept, TestAccept{Token: "ab", StreamTOS: true})
	_ = WriteFrame(&corpus, TypeEndReport, result.End{Role: result.RoleServer})
	f.Add(corpus.Bytes())
	f.Add(frameBytes(0xffffffff, 1, nil))
	f.Add(frameBytes(3, 3, []byte(`{"message":"busy"}`)))
	f.Add([]byte("WPRC\x00\x01\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		for i := 0; i < 16; i++ {
			fr, err := ReadFrame(r)
			if err != nil {
				return
			}
			if len(fr.Body)+1 > MaxFrame {
				t.Fatalf("accepted a %d-byte frame", len(fr.Body))
			}
			switch fr.Type {
			case TypeTestRequest:
				var m TestRequest
				if fr.Decode(&m) == nil {
					// A spec that passes gives every data stream a TOS byte.
					if m.Spec.Validate() == nil && m.Spec.Protocol != spec.RR {
						for id := 1; id <= m.Spec.DataConns(); id++ {
							if tos := m.Spec.TOSOn(id); tos < 0 || tos > 255 {
								t.Fatalf("stream %d of a valid spec has TOS %d", id, tos)
							}
						}
					}
					// The format is the client's letter or the default,
					// never a unit the emitters don't know.
					if f := m.OutputFormat(); f != 0 {
						if _, err := units.ParseFormat(string(rune(f))); err != nil || m.Format != string(rune(f)) {
							t.Fatalf("format %q read as %q", m.Format, byte(f))
						}
					}
				}
			case TypeEndReport:
				var m result.End
				_ = fr.Decode(&m)
			case TypeInterval:
				var m result.Interval
				_ = fr.Decode(&m)
			default:
				var m map[string]any
				_ = fr.Decode(&m)
			}
		}
	})
}

// FuzzParseDataHello checks the data-connection hello decoder.
func FuzzParseDataHello(f *testing.F) {
	f.Add(DataHello{StreamID: 3}.Marshal())
	f.Add([]byte("WPRD"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseDataHello(data)
		if err != nil {
			return
		}
		if !bytes.Equal(h.Marshal(), data[:DataHelloLen]) {
			t.Fatalf("re-encoding differs")
		}
	})
}
