package session_test

import (
	"testing"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// --skip-rx-copy between wireperf ends, forward (the server receives),
// -R (the client does) and --bidir: each receiver, reading with
// MSG_TRUNC, counts exactly the bytes its sender sent, the sender's
// count being the truth. The senders send the repeating payload, which
// travels in the spec too.
func TestSkipRxCopyCountsWhatWasSent(t *testing.T) {
	port := startServer(t)
	const total = 48 << 20
	for _, dir := range []string{"forward", "reverse", "bidir"} {
		s := spec.Default()
		s.Duration, s.Interval, s.Bytes, s.Length = 0, 0, total, 128<<10
		s.SkipRxCopy, s.RepeatingPayload = true, true
		s.Reverse, s.Bidir = dir == "reverse", dir == "bidir"
		res, err := runClient(t, port, s, nil)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if !res.Spec.SkipRxCopy || !res.Spec.RepeatingPayload {
			t.Errorf("%s: the result's spec lost the flags: %+v", dir, res.Spec)
		}
		dirs := res.Directions()
		if want := map[bool]int{false: 1, true: 2}[s.Bidir]; len(dirs) != want {
			t.Fatalf("%s: %d directions, want %d", dir, len(dirs), want)
		}
		for _, d := range dirs {
			if d.Sent.Bytes != total || d.Received.Bytes != d.Sent.Bytes {
				t.Errorf("%s, %s sending: sent %d, received %d; want %d both", dir, d.SenderRole, d.Sent.Bytes, d.Received.Bytes, int64(total))
			}
		}
		// The received figures above are the kernel's (TCP_INFO); the
		// receivers' own reads, each counted from recv's return, must
		// add up to the same.
		for _, end := range []struct {
			name    string
			streams []result.Stream
		}{{"client", res.Local.Streams}, {"server", res.Remote.Streams}} {
			for _, st := range end.streams {
				if st.Sender {
					continue
				}
				var read int64
				for _, rl := range st.ReadLengths {
					read += int64(rl.Length) * rl.Count
				}
				if read != total {
					t.Errorf("%s, the %s's stream %d: its reads returned %d bytes, want %d", dir, end.name, st.ID, read, int64(total))
				}
			}
		}
	}
}
