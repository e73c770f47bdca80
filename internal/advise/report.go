package advise

import (
	"net"
	"time"

	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/result"
)

// Probe is one RTT probe: a TCP connection to the server's port.
type Probe struct {
	RTTus  uint32 `json:"rtt_us"`
	Kernel bool   `json:"kernel"` // timed by the kernel (TCP_INFO), not by the clock around connect
}

// Report is everything a guided run (internal/advise/guide) found, and
// its verdict.
type Report struct {
	Target    string    `json:"target"` // host:port
	Direction string    `json:"direction"`
	StartedAt time.Time `json:"started_at"`
	// BaselineRTTus is the least RTT of the probes on the idle path.
	BaselineRTTus uint32  `json:"baseline_rtt_us"`
	Probes        []Probe `json:"probes"`
	ProbeMethod   string  `json:"probe_method"`
	PathMTU       int     `json:"path_mtu"`
	MSS           int     `json:"mss"`
	Sender        Host    `json:"sender"`
	Receiver      Host    `json:"receiver"`
	// Bottleneck in bit/s, and where it came from: "given" (--bottleneck),
	// "measured" (the best goodput of the tests) or "packet train" (the
	// rate a train of datagrams arrived at, on the wire).
	BottleneckBps    float64 `json:"bottleneck_bps"`
	BottleneckSource string  `json:"bottleneck_source"`
	// BottleneckLowerBound says why a measured bottleneck is only a lower
	// bound: the host paced the packet trains ("" when it is not).
	BottleneckLowerBound string       `json:"bottleneck_lower_bound,omitempty"`
	IdealBps             float64      `json:"ideal_bps"`
	BDPBytes             float64      `json:"bdp_bytes"`
	Single               Measurement  `json:"single"`
	Multi                *Measurement `json:"multi,omitempty"`
	// StreamSteps are the multi-stream tests in the order run: more
	// streams while the streams were window-limited (NextStreams). Multi
	// is the one with the highest goodput.
	StreamSteps []StreamStep `json:"stream_steps,omitempty"`
	// Train is the packet train's capacity estimate, when one ran.
	Train *Train `json:"packet_train,omitempty"`
	// TestSeconds is each test's length; LengthGiven says the user chose
	// it (-t) rather than advise (TestLength, Lengthen).
	TestSeconds float64 `json:"test_seconds,omitempty"`
	LengthGiven bool    `json:"length_given,omitempty"`
	Verdict     Verdict `json:"verdict"`
	Advice      Advice  `json:"advice"`
	// Results are the tests' full results, for the record.
	Results []*result.Result `json:"results,omitempty"`
	// Warnings say what, outside the path, limited the tests: run through
	// a lab, its router falling behind (lab.RouterWatch).
	Warnings []string `json:"warnings,omitempty"`
	// Lab names the lab it ran through and its hosts' TCP buffers
	// (lab.RouterWatch.Line); "" outside a lab.
	Lab string `json:"lab,omitempty"`
	// PathDrops are the path's router's drops in the sender's direction
	// over the tests, when it can tell (NotePathDrops).
	PathDrops *PathDrops `json:"path_drops,omitempty"`
	// evidence is what the verdict was drawn from, for NotePathDrops.
	evidence *Evidence
}

// NotePathDrops adds a router's drops in the sender's direction over the
// tests (where names the router) and draws the verdict and advice again
// with them: a full queue's drops are the path full, others a lossy path.
func (rep *Report) NotePathDrops(where string, queue, other uint64) {
	rep.PathDrops = &PathDrops{Where: where, Queue: queue, Other: other}
	if e := rep.evidence; e != nil {
		e.PathDrops = rep.PathDrops
		rep.Verdict = Classify(*e)
		rep.Advice = Recommend(*e, rep.Verdict)
	}
}

// Inputs are what a guided run measured, for Analyze.
type Inputs struct {
	Target      string
	Reverse     bool    // the server sent
	Bottleneck  float64 // bit/s as given; 0 unknown
	Probes      []Probe
	ProbeMethod string
	// ProbeMSS and ProbeMTU are the probes' negotiated MSS and path MTU.
	ProbeMSS, ProbeMTU int
	Single, Multi      *result.Result
	// Steps are the multi-stream tests run, Multi the best of them; Extra
	// are other results for the record (tests run again longer, the
	// other multi-stream tests).
	Steps []StreamStep
	Extra []*result.Result
	// Train is a packet train's capacity estimate, when one ran.
	Train *Train
	// Length is each test's length, LengthGiven whether the user chose it.
	Length      time.Duration
	LengthGiven bool
	// LocalLimits are this host's limits, for when its test results lack
	// them.
	LocalLimits *result.Limits
	StartedAt   time.Time
}

// Analyze turns a guided run's measurements into the report: the hosts,
// the bottleneck and BDP, the verdict and the advice.
func Analyze(in Inputs) *Report {
	rep := &Report{Target: in.Target, StartedAt: in.StartedAt, Direction: "client→server", Probes: in.Probes,
		ProbeMethod: in.ProbeMethod, BaselineRTTus: MinProbe(in.Probes), MSS: in.ProbeMSS, PathMTU: in.ProbeMTU,
		StreamSteps: in.Steps, Train: in.Train, TestSeconds: in.Length.Seconds(), LengthGiven: in.LengthGiven}
	senderRole := result.RoleClient
	if in.Reverse {
		rep.Direction, senderRole = "server→client", result.RoleServer
	}
	for _, r := range append([]*result.Result{in.Single, in.Multi}, in.Extra...) {
		if r != nil {
			rep.Results = append(rep.Results, r)
		}
	}
	if in.Single == nil {
		return rep
	}
	rep.Sender, rep.Receiver = hostsOf(in.Single, senderRole)
	local := &rep.Sender // this host: the sender unless reversed
	if in.Reverse {
		local = &rep.Receiver
	}
	if local.Limits == nil {
		local.Limits = in.LocalLimits
	}
	rep.PathMTU, rep.MSS = pathOf(in.Single, senderRole, rep.PathMTU, rep.MSS)
	rep.Single = MeasurementOf(in.Single, senderRole, in.Bottleneck)
	if in.Multi != nil {
		m := MeasurementOf(in.Multi, senderRole, in.Bottleneck)
		rep.Multi = &m
	}
	e := Evidence{
		Sender: rep.Sender, Receiver: rep.Receiver,
		BaselineRTT: us(rep.BaselineRTTus), MTU: rep.PathMTU,
		Bottleneck: in.Bottleneck, BottleneckGiven: in.Bottleneck > 0,
		Single: rep.Single, Multi: rep.Multi,
	}
	rep.BottleneckSource = "given"
	if !e.BottleneckGiven {
		rep.BottleneckSource = "measured"
		e.Bottleneck = max(rep.Single.GoodputBps, rep.Multi.goodput())
		// A packet train measures the capacity past windows that held
		// every stream back; it counts when its goodput beats the tests'.
		if tr := in.Train; tr != nil && tr.CapacityBps > 0 && figures.LineRateGoodput(tr.CapacityBps, rep.PathMTU) > e.Bottleneck {
			rep.BottleneckSource = "packet train"
			e.Bottleneck, e.FromTrain = tr.CapacityBps, true
		}
		e.LowerBound = HostPacedTrain(in.Train, e.FromTrain)
		rep.BottleneckLowerBound = e.LowerBound
		rep.Single.TCP = withIdeal(rep.Single, e.Ideal())
		if rep.Multi != nil {
			rep.Multi.TCP = withIdeal(*rep.Multi, e.Ideal())
		}
		e.Single, e.Multi = rep.Single, rep.Multi
	}
	rep.BottleneckBps = e.Bottleneck
	rep.IdealBps = e.Ideal()
	rep.BDPBytes = e.BDP()
	rep.Verdict = Classify(e)
	rep.Advice = Recommend(e, rep.Verdict)
	rep.evidence = &e
	return rep
}

// withIdeal fills a run's Transfer Time Ratio against a measured ideal.
func withIdeal(r Measurement, ideal float64) *figures.DirectionFigures {
	if r.TCP == nil {
		return nil
	}
	t := *r.TCP
	t.IdealBps = ideal
	if ratio, ok := figures.TransferTimeRatio(int64(r.GoodputBps*r.Seconds/8), r.Seconds, ideal); ok {
		t.TransferTimeRatio = &ratio
	}
	return &t
}

// MinProbe is the least RTT of the probes, in µs (0 without probes).
func MinProbe(ps []Probe) uint32 {
	var m uint32
	for i, p := range ps {
		if i == 0 || p.RTTus < m {
			m = p.RTTus
		}
	}
	return m
}

// hostsOf names the sending and receiving hosts of a result's test.
func hostsOf(r *result.Result, senderRole string) (sender, receiver Host) {
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		h := Host{Role: e.Role, System: e.Host.System, Limits: e.Limits}
		if len(e.Streams) > 0 {
			s := e.Streams[0]
			sock := s.Socket
			h.Socket = &sock
			h.Address = hostOnly(s.LocalAddr)
		}
		if e.Role == senderRole {
			sender = h
		} else {
			receiver = h
		}
	}
	if sender.Role == "" {
		sender.Role = senderRole
	}
	if receiver.Role == "" {
		receiver.Role = otherRole(senderRole)
	}
	return sender, receiver
}

// pathOf takes the path MTU and MSS from the sender's last TCP_INFO,
// which has seen path MTU discovery, else keeps the probes'.
func pathOf(r *result.Result, senderRole string, mtu, mss int) (int, int) {
	for _, f := range r.Flows() {
		if f.SenderRole != senderRole || f.Sent == nil {
			continue
		}
		if i := f.Sent.TCPInfo; i != nil {
			if i.PMTU > 0 {
				mtu = int(i.PMTU)
			}
			if i.SndMSS > 0 {
				mss = int(i.SndMSS)
			}
		} else if f.Sent.Socket.MTU > 0 {
			mtu, mss = f.Sent.Socket.MTU, f.Sent.Socket.MSS
		}
		break
	}
	return mtu, mss
}

func hostOnly(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

func otherRole(role string) string {
	if role == result.RoleClient {
		return result.RoleServer
	}
	return result.RoleClient
}
