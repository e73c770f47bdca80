package iperf3

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/jsondoc"
)

// TestEmitHasIperf3Keys renders iperf3-mode results through emit.JSON
// and checks that every key real iperf3 3.12 writes (the fixtures in
// internal/emit/testdata) is there, with its JSON type.
func TestEmitHasIperf3Keys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fixture string
		mod     func(*spec.Spec)
	}{
		{"iperf3-3.12-tcp.json", nil},
		{"iperf3-3.12-tcp-P2.json", func(s *spec.Spec) { s.Streams = 2 }},
		{"iperf3-3.12-tcp-R.json", func(s *spec.Spec) { s.Reverse = true }},
		{"iperf3-3.12-tcp-bidir.json", func(s *spec.Spec) { s.Bidir = true }},
		{"iperf3-3.12-udp.json", udpMod(nil)},
		{"iperf3-3.12-udp-P2.json", udpMod(func(s *spec.Spec) { s.Streams = 2 })},
		{"iperf3-3.12-udp-R.json", udpMod(func(s *spec.Spec) { s.Reverse = true })},
		{"iperf3-3.12-udp-bidir.json", udpMod(func(s *spec.Spec) { s.Bidir = true })},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(filepath.Join("..", "emit", "testdata", tt.fixture))
			if err != nil {
				t.Skip("fixture missing: ", err)
			}
			var want map[string]any
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			_, port := startIperf3Server(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := RunClient(ctx, ClientConfig{Host: "127.0.0.1", Port: port, Spec: clientSpec(tt.mod)})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := (&emit.JSON{W: &b}).Write(res); err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(b.Bytes(), &got); err != nil {
				t.Fatalf("emit.JSON wrote invalid JSON: %v", err)
			}
			for _, part := range [][]any{{"start"}, {"intervals", 0}, {"end"}} {
				for _, p := range jsondoc.MissingKeys(fmt.Sprint(part), jsondoc.At(t, want, part...), jsondoc.At(t, got, part...)) {
					t.Error(p)
				}
			}
			// The figures are both ends': the server's received bytes
			// reach iperf3's layout through the exchanged results.
			dirs := res.Directions()
			if n := jsondoc.IntAt(t, got, "end", "sum_received", "bytes"); n != dirs[0].Received.Bytes || n == 0 {
				t.Errorf("end.sum_received.bytes = %d; want %d", n, dirs[0].Received.Bytes)
			}
		})
	}
}

func udpMod(mod func(*spec.Spec)) func(*spec.Spec) {
	return func(s *spec.Spec) {
		s.Protocol, s.Length, s.Rate = spec.UDP, 1400, 5e6
		if mod != nil {
			mod(s)
		}
	}
}
