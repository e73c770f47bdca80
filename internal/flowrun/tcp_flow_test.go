package flowrun

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/tcpinfo"
)

// fullSample has every field at a realistic width, for size estimates.
func fullSample(k int) tcpinfo.Sample {
	return tcpinfo.Sample{
		At: time.Duration(k) * 100 * time.Millisecond,
		Info: tcpinfo.Info{
			RTTus: 215312, RTTVarus: 1234, MinRTTus: 215001, SndMSS: 1448, SndCwnd: 18000, SndSsthresh: 2147483647,
			TotalRetrans: 12345, PacingRate: 123456789012, DeliveryRate: 117000000, BytesAcked: 123456789012,
			BytesRetrans: 1234567890, NotsentBytes: 4194304, SndWnd: 33554432, RcvWnd: 65536,
			BusyTimeus: 1234567890, RwndLimitedus: 123456789, SndbufLimitedus: 123456789,
		},
		BBR: &tcpinfo.BBR{BandwidthBps: 117000000, MinRTTus: 215001},
	}
}

func TestTimelineOfThins(t *testing.T) {
	var samples []tcpinfo.Sample
	for k := 1; k <= 101; k++ {
		samples = append(samples, fullSample(k))
	}
	tl := timelineOf(tcpinfo.Timeline{Samples: samples, Period: 100 * time.Millisecond}, 30)
	if len(tl.Samples) > 30 || len(tl.Samples) < 15 {
		t.Fatalf("%d samples, want 15 to 30", len(tl.Samples))
	}
	if tl.Period != 0.4 {
		t.Errorf("period %v, want 0.4 (thinned twice)", tl.Period)
	}
	if last := tl.Samples[len(tl.Samples)-1].T; last != 10.1 {
		t.Errorf("last sample at %v, want the final one at 10.1", last)
	}
	for i := 1; i < len(tl.Samples); i++ {
		if tl.Samples[i].T <= tl.Samples[i-1].T {
			t.Fatalf("not monotonic at %d", i)
		}
	}
	full := timelineOf(tcpinfo.Timeline{Samples: samples[:10], Period: 100 * time.Millisecond}, 30)
	if len(full.Samples) != 10 || full.Period != 0.1 {
		t.Errorf("a short timeline was changed: %d samples at %v", len(full.Samples), full.Period)
	}
	if s := full.Samples[0]; s.BBRBandwidth != 117000000 || s.SndWnd != 33554432 || s.BusyUs != 1234567890 {
		t.Errorf("sample not copied: %+v", s)
	}
	if u := timelineOf(tcpinfo.Timeline{Err: tcpinfo.ErrUnsupported}, 10); u.Unavailable == "" && tcpinfo.Unavailable() != "" {
		t.Error("an unsupported system's timeline does not say so")
	}
}

// The final report of an end that sends on the most streams a test may
// have, with full timelines, fits in one control frame.
func TestTimelinesFitTheFinalReport(t *testing.T) {
	for _, n := range []int{1, 2, 8, spec.MaxStreams, 2 * spec.MaxStreams} {
		share := maxTimelineSamples / n
		end := result.End{Role: result.RoleServer, Limits: &result.Limits{}}
		for id := 1; id <= n; id++ {
			var samples []tcpinfo.Sample // more than the share, so thinning has work
			for k := 1; k <= min(tcpinfo.DefaultMaxSamples, 4*share+1); k++ {
				samples = append(samples, fullSample(k))
			}
			info := fullSample(0).Info
			end.Streams = append(end.Streams, result.Stream{
				ID: id, Sender: true, LocalAddr: "[2001:db8::1234:5678]:5201", RemoteAddr: "[2001:db8::8765:4321]:54321",
				Socket: result.Socket{SndBufRequested: 1 << 30, SndBufGranted: 1 << 31, RcvBufRequested: 1 << 30, RcvBufGranted: 1 << 31,
					MSS: 1448, MTU: 1500, Congestion: "cubic"},
				Start: 1.5, End: 86400.123456, Bytes: 1 << 50, Calls: 1 << 40, Retransmits: 1 << 30,
				MaxCwnd: 1 << 40, MaxSndWnd: 1 << 31, MinRTTus: 1 << 30, MaxRTTus: 1 << 30, MeanRTTus: 1 << 30,
				TCPInfo:     &info,
				TCPStats:    &result.TCPStats{BytesSent: 1 << 50, SlowStart: &result.SlowStart{End: 1.23, Cause: "ssthresh"}},
				TCPTimeline: timelineOf(tcpinfo.Timeline{Samples: samples, Period: 100 * time.Millisecond}, share),
			})
		}
		js, err := json.Marshal(end)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d streams: %d samples each, report %d bytes", n, len(end.Streams[0].TCPTimeline.Samples), len(js))
		if len(js) >= proto.MaxFrame {
			t.Errorf("%d streams: the final report is %d bytes, over the %d-byte frame", n, len(js), proto.MaxFrame)
		}
	}
}

func TestTimelineFigures(t *testing.T) {
	type step struct {
		at          float64
		ssthresh    uint32
		retrans     uint32
		rtt, sndWnd uint32
		acked       uint64
	}
	tests := []struct {
		name       string
		steps      []step
		omitAfter  int // markOmitEnd after this many samples; 0 none
		cause      string
		end        float64
		reductions int
		meanRTT    uint32
	}{
		{"never ends", []step{{0.1, infiniteSsthresh, 0, 100, 1000, 1}, {0.2, infiniteSsthresh, 0, 300, 2000, 2}}, 0, "", 0, 0, 200},
		{"hystart", []step{{0.1, infiniteSsthresh, 0, 100, 1, 1}, {0.2, 50, 0, 100, 1, 2}, {0.3, 50, 0, 100, 1, 3}}, 0, result.SlowStartSsthresh, 0.2, 0, 100},
		{"loss, then two more events", []step{{0.1, infiniteSsthresh, 0, 100, 1, 1}, {0.2, 70, 3, 100, 1, 2},
			{0.3, 70, 3, 100, 1, 3}, {0.4, 90, 5, 100, 1, 4}, {0.5, 60, 9, 100, 1, 5}}, 0, result.SlowStartLoss, 0.2, 3, 100},
		{"omitted start leaves the RTT mean", []step{{0.1, infiniteSsthresh, 0, 1000, 1, 1}, {0.2, infiniteSsthresh, 0, 200, 1, 2},
			{0.3, infiniteSsthresh, 0, 400, 1, 3}}, 1, "", 0, 0, 300},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tf timelineFigures
			for i, s := range tc.steps {
				tf.add(&tcpinfo.Sample{At: time.Duration(s.at * float64(time.Second)), Info: tcpinfo.Info{
					SndSsthresh: s.ssthresh, TotalRetrans: s.retrans, RTTus: s.rtt, SndWnd: s.sndWnd, BytesAcked: s.acked,
					SndCwnd: 10, SndMSS: 1000}})
				if i+1 == tc.omitAfter {
					tf.markOmitEnd()
				}
			}
			var st result.TCPStats
			tf.fill(&st)
			if tc.cause == "" {
				if st.SlowStart != nil || !st.SlowStartOngoing {
					t.Errorf("slow start %+v, ongoing %v; want it never ended", st.SlowStart, st.SlowStartOngoing)
				}
			} else if st.SlowStart == nil || st.SlowStart.Cause != tc.cause || fmt.Sprint(st.SlowStart.End) != fmt.Sprint(tc.end) {
				t.Errorf("slow start %+v, want %s at %v", st.SlowStart, tc.cause, tc.end)
			}
			if st.CwndReductions != tc.reductions {
				t.Errorf("%d reductions, want %d", st.CwndReductions, tc.reductions)
			}
			if st.MeanRTTus != tc.meanRTT {
				t.Errorf("mean RTT %d, want %d", st.MeanRTTus, tc.meanRTT)
			}
		})
	}
}
