package advise

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/tcpinfo"
)

// wanResult is a client→server test over 215 ms whose streams each run
// at rate, held back by a 694 kB receive window for 70% of busy time.
func wanResult(streams int, rate float64) *result.Result {
	r := &result.Result{
		Local:  result.End{Role: result.RoleClient, Host: result.Host{System: "Linux a 6.18 x86_64"}},
		Remote: result.End{Role: result.RoleServer, Host: result.Host{System: "Linux b 6.18 x86_64"}},
	}
	for id := 1; id <= streams; id++ {
		bytes := int64(rate * 4 / 8)
		tl := &result.TCPTimeline{Period: 0.1}
		for k := 1; k <= 40; k++ {
			tl.Samples = append(tl.Samples, result.TCPSample{T: float64(k) / 10, SndWnd: uint32(min(k, 13)) * 53400,
				BytesAcked: uint64(k) * uint64(bytes) / 40})
		}
		r.Local.Streams = append(r.Local.Streams, result.Stream{
			ID: id, Sender: true, LocalAddr: "10.77.1.1:40000", RemoteAddr: "10.77.2.2:5201", End: 4, Bytes: bytes,
			Socket: result.Socket{MSS: 1448, MTU: 1500}, TCPInfo: &tcpinfo.Info{PMTU: 1500, SndMSS: 1448},
			TCPStats: &result.TCPStats{BytesSent: uint64(bytes), BusyUs: 4e6, RwndLimitedUs: 2.8e6, BaselineRTTus: 215000,
				MeanRTTus: 218000, RTTSamples: 40, MaxSndWnd: 694000, SlowStartOngoing: true, Duration: 4},
			TCPTimeline: tl,
		})
		r.Remote.Streams = append(r.Remote.Streams, result.Stream{ID: id, LocalAddr: "10.77.2.2:5201", RemoteAddr: "10.77.1.1:40000",
			End: 4, Bytes: bytes, Socket: result.Socket{MSS: 1448, MTU: 1500}})
	}
	return r
}

func TestAnalyze(t *testing.T) {
	local := &result.Limits{TCPRmem: [3]int64{4096, 131072, 1 << 20}, TCPWmem: [3]int64{4096, 16384, 4 << 20}}
	for _, tc := range []struct {
		name       string
		bottleneck float64
		source     string
		ideal      float64
	}{
		{"given", 1e9, "given", figures.LineRateGoodput(1e9, 1500)},
		{"measured", 0, "measured", 4 * 20e6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := Analyze(Inputs{
				Target: "10.77.2.2:5201", Bottleneck: tc.bottleneck, StartedAt: time.Now(),
				Probes:      []Probe{{RTTus: 216000, Kernel: true}, {RTTus: 215300, Kernel: true}, {RTTus: 215900, Kernel: true}},
				ProbeMethod: "test", ProbeMSS: 1448, ProbeMTU: 1500,
				Single: wanResult(1, 20e6), Multi: wanResult(4, 20e6), LocalLimits: local,
			})
			if rep.BaselineRTTus != 215300 || rep.PathMTU != 1500 || rep.MSS != 1448 || rep.Direction != "client→server" {
				t.Errorf("path %+v", rep)
			}
			if rep.Sender.Role != result.RoleClient || rep.Sender.Address != "10.77.1.1" || rep.Sender.Limits != local ||
				rep.Receiver.Role != result.RoleServer || rep.Receiver.Address != "10.77.2.2" || rep.Receiver.Limits != nil {
				t.Errorf("hosts %+v / %+v", rep.Sender, rep.Receiver)
			}
			if rep.BottleneckSource != tc.source || !near(rep.IdealBps, tc.ideal, 1e-6) {
				t.Errorf("bottleneck %s, ideal %.4g; want %s, %.4g", rep.BottleneckSource, rep.IdealBps, tc.source, tc.ideal)
			}
			if rep.Single.Streams != 1 || rep.Multi == nil || rep.Multi.Streams != 4 || len(rep.Results) != 2 {
				t.Errorf("measurements %+v %+v", rep.Single, rep.Multi)
			}
			if rep.Single.TCP == nil || rep.Single.TCP.TransferTimeRatio == nil {
				t.Errorf("no Transfer Time Ratio: %+v", rep.Single.TCP)
			}
			if rep.Verdict.Limit != LimitReceiverWindow || rep.Verdict.Host != result.RoleServer {
				t.Errorf("verdict %+v", rep.Verdict)
			}
			var b bytes.Buffer
			if err := rep.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"Baseline RTT  215.3 ms (least of 3: 216.0 215.3 215.9 ms)", "Client        10.77.1.1, sends, tcp_rmem 4096 131072 1048576",
				"Server        10.77.2.2, receives, kernel limits unknown", "Verdict: receiver-window-limited: the server (10.77.2.2)",
				`on the server (10.77.2.2): sysctl -w net.ipv4.tcp_rmem=`, "Why:"} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("text lacks %q:\n%s", want, b.String())
				}
			}
		})
	}
}

func TestAnalyzeReverse(t *testing.T) {
	r := wanResult(1, 20e6)
	// Reverse: the server sent.
	r.Local, r.Remote = r.Remote, r.Local
	r.Local.Role, r.Remote.Role = result.RoleClient, result.RoleServer
	rep := Analyze(Inputs{Reverse: true, Bottleneck: 1e9, Probes: []Probe{{RTTus: 215000}}, Single: r})
	if rep.Direction != "server→client" || rep.Sender.Role != result.RoleServer || rep.Receiver.Role != result.RoleClient ||
		rep.Verdict.Host != result.RoleClient {
		t.Errorf("reverse: direction %s, sender %s, receiver %s, verdict on %s", rep.Direction, rep.Sender.Role, rep.Receiver.Role, rep.Verdict.Host)
	}
}
