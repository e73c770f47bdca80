package emit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

// withTCPInternals gives every sending stream of r TCP statistics and a
// 30-sample timeline at 100 ms: 1% retransmitted, 60% of busy time
// receiver-window-limited, slow start ending at 0.5 s on a loss.
func withTCPInternals(r *result.Result) *result.Result {
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		for i := range e.Streams {
			s := &e.Streams[i]
			if !s.Sender {
				continue
			}
			tl := &result.TCPTimeline{Period: 0.1}
			for k := 1; k <= 30; k++ {
				tl.Samples = append(tl.Samples, result.TCPSample{T: float64(k) / 10, RTTus: 21000, MinRTTus: 20000,
					SndMSS: 1448, SndCwnd: uint32(10 * k), SndSsthresh: 2147483647, BytesAcked: uint64(k) * 1e6, SndWnd: 3 << 20})
			}
			s.TCPTimeline = tl
			s.TCPStats = &result.TCPStats{
				BytesSent: 100e6, BytesRetrans: 1e6, BytesAcked: 99e6, BusyUs: 3e6, RwndLimitedUs: 1.8e6,
				BaselineRTTus: 20000, MeanRTTus: 25000, RTTSamples: 30, MaxSndWnd: 3 << 20, CwndReductions: 2,
				SlowStart: &result.SlowStart{End: 0.5, Cause: result.SlowStartLoss, CwndBytes: 1 << 20, BytesAcked: 5e6}, Duration: 3,
			}
		}
	}
	return r
}

func summaryText(t *testing.T, r *result.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := (&Text{W: &b}).Summary(r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestTextTCPInternals(t *testing.T) {
	r := withTCPInternals(forwardResult())
	out := summaryText(t, r)
	for _, want := range []string{
		"[  1] TCP busy 3.00 s, limited by: receiver window 60.0%, sender buffer 0.0%, network 40.0%",
		"[  1] RFC 6349: TCP Efficiency 99.00% (95.4 MBytes sent, 977 KBytes retransmitted)",
		"Buffer Delay 25.0% (mean RTT 25.00ms over baseline 20.00ms)",
		"Transfer Time Ratio needs --bottleneck RATE",
		"[  1] Slow start ended at 0.50 s (loss, cwnd 1.00 MBytes), 17% of the 3.00 s test: 80.0 Mbits/sec before, 80.0 Mbits/sec after",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	// 9.50 Gbit/s against the 9.90 that 10 Gbit/s carries at MTU 9000.
	r.Local.BottleneckBps = 10e9
	if out := summaryText(t, r); !strings.Contains(out, "Transfer Time Ratio 1.04 (ideal 9.90 Gbits/sec at a 10.0 Gbits/sec bottleneck)") {
		t.Errorf("no Transfer Time Ratio with a bottleneck:\n%s", out)
	}
}

func TestTextTCPInternalsSum(t *testing.T) {
	out := summaryText(t, withTCPInternals(parallelResult()))
	for _, want := range []string{"[SUM] TCP busy 6.00 s", "[SUM] RFC 6349: TCP Efficiency 99.00%", "[SUM] Slow start ended at 0.50 s in every stream"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

func TestTextTCPInternalsAbsent(t *testing.T) {
	r := forwardResult()
	if out := summaryText(t, r); strings.Contains(out, "RFC 6349") || strings.Contains(out, "TCP busy") {
		t.Errorf("a result without TCP statistics shows TCP internals:\n%s", out)
	}
	for i := range r.Local.Streams {
		r.Local.Streams[i].TCPTimeline = &result.TCPTimeline{Unavailable: "TCP_INFO is not read on plan9: no RTT"}
	}
	if out := summaryText(t, r); !strings.Contains(out, "[  1] TCP internals: TCP_INFO is not read on plan9") {
		t.Errorf("the fallback does not say what is missing:\n%s", out)
	}
}

func TestTextSlowStartNeverEnded(t *testing.T) {
	r := withTCPInternals(forwardResult())
	for i := range r.Local.Streams {
		if st := r.Local.Streams[i].TCPStats; st != nil {
			st.SlowStart, st.SlowStartOngoing = nil, true
		}
	}
	if out := summaryText(t, r); !strings.Contains(out, "Slow start never ended (no loss, ssthresh never set): the receiver's window") {
		t.Errorf("window-capped stream:\n%s", out)
	}
	for i := range r.Local.Streams {
		if st := r.Local.Streams[i].TCPStats; st != nil {
			st.RwndLimitedUs = 0
		}
	}
	if out := summaryText(t, r); !strings.Contains(out, "Slow start had not ended when the sender stopped at 3.00 s") {
		t.Errorf("short test:\n%s", out)
	}
}

func TestJSONTCPInternals(t *testing.T) {
	r := withTCPInternals(forwardResult())
	r.Local.BottleneckBps = 1e9
	var b bytes.Buffer
	if err := (&JSON{W: &b}).Write(r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		End struct {
			SumSent struct {
				Retransmits *int64 `json:"retransmits"`
			} `json:"sum_sent"`
		} `json:"end"`
		Wireperf struct {
			TCP []struct {
				Direction         string   `json:"direction"`
				Efficiency        *float64 `json:"tcp_efficiency_percent"`
				BufferDelay       *float64 `json:"buffer_delay_percent"`
				TransferTimeRatio *float64 `json:"transfer_time_ratio"`
				Limited           struct {
					Rwnd float64 `json:"rwnd_limited_share"`
				} `json:"limited"`
			} `json:"tcp"`
			Flows []struct {
				TCP *struct {
					SlowStart struct {
						End   float64 `json:"end"`
						Cause string  `json:"cause"`
					} `json:"slow_start"`
				} `json:"tcp"`
			} `json:"flows"`
			Result struct {
				Local struct {
					Streams []struct {
						Timeline *struct {
							Period  float64 `json:"period"`
							Samples []struct {
								T      float64 `json:"t"`
								RTT    uint32  `json:"rtt_us"`
								SndWnd uint32  `json:"snd_wnd"`
							} `json:"samples"`
						} `json:"tcp_timeline"`
					} `json:"streams"`
				} `json:"local"`
			} `json:"result"`
		} `json:"wireperf"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.End.SumSent.Retransmits == nil {
		t.Error("iperf3's end.sum_sent.retransmits is gone")
	}
	w := doc.Wireperf
	if len(w.TCP) != 1 || w.TCP[0].Efficiency == nil || *w.TCP[0].Efficiency != 99 || w.TCP[0].TransferTimeRatio == nil ||
		w.TCP[0].BufferDelay == nil || w.TCP[0].Limited.Rwnd != 0.6 || w.TCP[0].Direction != "client→server" {
		t.Errorf("wireperf.tcp = %+v", w.TCP)
	}
	if len(w.Flows) != 1 || w.Flows[0].TCP == nil || w.Flows[0].TCP.SlowStart.Cause != "loss" {
		t.Errorf("wireperf.flows[].tcp = %+v", w.Flows)
	}
	var tl = w.Result.Local.Streams[0].Timeline
	if tl == nil || tl.Period != 0.1 || len(tl.Samples) != 30 || tl.Samples[29].T != 3 || tl.Samples[0].SndWnd != 3<<20 {
		t.Errorf("timeline %+v", tl)
	}
}
