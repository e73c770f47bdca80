package emit

import (
	"fmt"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// Synthetic results for the tests: both ends filled in as a real test
// would fill them, with figures chosen so that sums and sides are told
// apart in the output.

const (
	serverHost = "127.0.0.1"
	serverPort = 5201
	intervalsN = 3
)

// flowDef is one data connection of a synthetic test.
type flowDef struct {
	id         int
	senderRole string
	perSecond  int64 // bytes sent in the first interval
}

// The read-length histogram every receiver gets: 131072 and 65536 are
// common, 1368 just above 5% and 100 just below.
var testReadLengths = []result.ReadLength{
	{Length: 100, Count: 40},
	{Length: 1368, Count: 60},
	{Length: 65536, Count: 200},
	{Length: 131072, Count: 700},
}

func forwardResult() *result.Result {
	s := spec.Default()
	s.Window = 2 << 20
	s.Length = 128 << 10 // the reads in testReadLengths are no longer than this
	return buildResult(s, []flowDef{{1, result.RoleClient, 1_180_000_000}})
}

func parallelResult() *result.Result {
	s := spec.Default()
	s.Streams = 2
	return buildResult(s, []flowDef{
		{1, result.RoleClient, 1_180_000_000},
		{2, result.RoleClient, 590_000_000},
	})
}

func reverseResult() *result.Result {
	s := spec.Default()
	s.Reverse = true
	return buildResult(s, []flowDef{{1, result.RoleServer, 1_720_000_000}})
}

func bidirResult() *result.Result {
	s := spec.Default()
	s.Bidir = true
	return buildResult(s, []flowDef{
		{1, result.RoleClient, 1_760_000_000},
		{2, result.RoleServer, 179_000_000},
	})
}

func bidirParallelResult() *result.Result {
	s := spec.Default()
	s.Bidir = true
	s.Streams = 2
	return buildResult(s, []flowDef{
		{1, result.RoleClient, 1_180_000_000},
		{2, result.RoleClient, 590_000_000},
		{3, result.RoleServer, 220_000_000},
		{4, result.RoleServer, 110_000_000},
	})
}

// socketFor is what an end asked of a data socket and got: a -w request
// is doubled on the client and capped by rmem_max on the server, so both
// differ from the request.
func socketFor(s spec.Spec, role string) result.Socket {
	sock := result.Socket{SndBufGranted: 16384, RcvBufGranted: 131072, MSS: 8948, MTU: 9000, Congestion: "bbr"}
	if role == result.RoleServer {
		sock.MTU = 0 // unknown, to show how that prints
	}
	if s.Window > 0 {
		sock.SndBufRequested, sock.RcvBufRequested = s.Window, s.Window
		sock.SndBufGranted, sock.RcvBufGranted = 2*s.Window, 2*s.Window
		if role == result.RoleServer {
			sock.SndBufGranted, sock.RcvBufGranted = 425984, 425984
		}
	}
	return sock
}

// sentIn and receivedIn are a flow's bytes in interval i: they grow a
// little each interval, and the receiver trails the sender.
func sentIn(f flowDef, i int) int64     { return f.perSecond + int64(i)*7_919_000 }
func receivedIn(f flowDef, i int) int64 { return sentIn(f, i) - int64(f.id)*65_536 }

// endDuration is how long each end's streams ran, a little over the test.
func endDuration(role string) float64 {
	if role == result.RoleServer {
		return intervalsN + 0.000403
	}
	return intervalsN + 0.000332
}

func buildResult(s spec.Spec, flows []flowDef) *result.Result {
	r := &result.Result{
		Spec:        s,
		Token:       "wptoken2ymn444ch7bmu2b2libul47jc63ff",
		StartedAt:   time.Date(2026, 11, 30, 5, 55, 50, 0, time.UTC),
		ServerAddr:  fmt.Sprintf("%s:%d", serverHost, serverPort),
		ConnectHost: serverHost,
		ConnectPort: serverPort,
		Local: result.End{
			Role:   result.RoleClient,
			Host:   result.Host{Hostname: "alpha", System: "Linux alpha 6.18.44 x86_64", Version: "0.1.0"},
			CPU:    result.CPU{UserPercent: 2.2, SystemPercent: 96.9, TotalPercent: 99.1},
			Limits: &result.Limits{RmemMax: 212992, WmemMax: 212992, Congestion: "cubic"},
		},
		Remote: result.End{
			Role:   result.RoleServer,
			Host:   result.Host{Hostname: "beta", System: "Linux beta 6.18.44 x86_64", Version: "0.1.0"},
			CPU:    result.CPU{UserPercent: 5.7, SystemPercent: 32.4, TotalPercent: 38.1},
			Limits: &result.Limits{RmemMax: 212992, WmemMax: 212992, Congestion: "cubic"},
		},
	}
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		for i := 0; i < intervalsN; i++ {
			e.Intervals = append(e.Intervals, result.Interval{Index: i, Start: float64(i), End: float64(i + 1)})
		}
		for _, f := range flows {
			e.Streams = append(e.Streams, buildStream(s, f, e))
		}
	}
	return r
}

// buildStream fills one end's stream of flow f, and its intervals.
func buildStream(s spec.Spec, f flowDef, e *result.End) result.Stream {
	sends := e.Role == f.senderRole
	clientAddr := fmt.Sprintf("127.0.0.1:%d", 40000+f.id)
	serverAddr := fmt.Sprintf("%s:%d", serverHost, serverPort)
	st := result.Stream{ID: f.id, Sender: sends, LocalAddr: clientAddr, RemoteAddr: serverAddr, Socket: socketFor(s, e.Role), End: endDuration(e.Role)}
	if e.Role == result.RoleServer {
		st.LocalAddr, st.RemoteAddr = serverAddr, clientAddr
	}
	for i := range e.Intervals {
		si := result.StreamInterval{ID: f.id, Sender: sends, Bytes: receivedIn(f, i)}
		if sends {
			si = result.StreamInterval{
				ID: f.id, Sender: true, Bytes: sentIn(f, i), Retransmits: int64(i + f.id),
				CwndBytes: uint64(900_000 + 10_000*i), SndWnd: 2_754_560, RTTus: uint32(37 + i), RTTVarus: 15,
				PMTU: 9000, HasTCPInfo: true,
			}
			st.Retransmits += si.Retransmits
			st.MaxCwnd = max(st.MaxCwnd, si.CwndBytes)
		}
		e.Intervals[i].Streams = append(e.Intervals[i].Streams, si)
		st.Bytes += si.Bytes
	}
	if sends {
		st.Calls = st.Bytes / int64(s.Length)
		st.MaxSndWnd, st.MinRTTus, st.MeanRTTus, st.MaxRTTus = 2_754_560, 37, 38, 39
	} else {
		st.ReadLengths = testReadLengths
		for _, rl := range testReadLengths {
			st.Calls += rl.Count
		}
	}
	return st
}
