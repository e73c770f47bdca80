package emit

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/udpmon"
)

// udpmonCSVHeader names the CSV columns. Rates are bit/s, times ns or µs
// as named; CPU columns are the aggregate ("cpu") split of each host in
// percent, then the busiest CPU's kernel share.
var udpmonCSVHeader = []string{
	"size", "spacing_ns", "count", "error",
	"sent", "send_errors", "achieved_spacing_ns", "spacing_error_p50_ns", "spacing_error_p99_ns", "spacing_error_max_ns",
	"sent_wire_bps", "sent_user_bps",
	"received", "lost", "loss_percent", "late", "duplicates", "reordered", "reorder_max_extent", "jitter_ms",
	"receive_seconds", "recv_wire_bps", "recv_user_bps",
	"rel_owd_min_us", "rel_owd_p50_us", "rel_owd_p90_us", "rel_owd_p99_us", "rel_owd_max_us",
	"snd_user", "snd_system", "snd_softirq", "snd_irq", "snd_idle", "snd_busiest_cpu", "snd_busiest_kernel",
	"rcv_user", "rcv_system", "rcv_softirq", "rcv_irq", "rcv_idle", "rcv_busiest_cpu", "rcv_busiest_kernel",
	"snd_interrupts", "rcv_interrupts",
	"rcv_in_errors", "rcv_rcvbuf_errors", "snd_sndbuf_errors", "rcv_no_ports",
	"loss_in_hosts", "loss_in_network", "verdict",
	"achieved_spacing_p99_ns", "spacing_not_held",
}

// UDPMonCSV writes a sweep as CSV, one row per point.
type UDPMonCSV struct {
	W io.Writer
}

// Write renders a finished sweep.
func (c *UDPMonCSV) Write(sw *udpmon.Sweep) error {
	w := csv.NewWriter(c.W)
	if err := w.Write(udpmonCSVHeader); err != nil {
		return err
	}
	for i := range sw.Points {
		if err := w.Write(udpmonCSVRow(&sw.Points[i])); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}

func udpmonCSVRow(p *udpmon.Point) []string {
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	row := []string{
		strconv.Itoa(p.Size), i(int64(p.Spacing)), i(p.Count), p.Error,
		i(p.Sent), i(p.SendErrors), f(p.AchievedSpacingNs), f(p.SpacingErrP50Ns), f(p.SpacingErrP99Ns), f(p.SpacingErrMaxNs),
		f(p.SentWireBps), f(p.SentUserBps),
		i(p.Received), i(p.Lost), f(p.LossPercent), i(p.Late), i(p.Duplicates), i(p.Reordered), i(p.ReorderMaxExtent), f(p.JitterMs),
		f(p.ReceiveSeconds), f(p.RecvWireBps), f(p.RecvUserBps),
	}
	if o := p.RelativeOWD; o != nil {
		row = append(row, f(o.Min), f(o.P50), f(o.P90), f(o.P99), f(o.Max))
	} else {
		row = append(row, "", "", "", "", "")
	}
	host := func(h *result.HostCounters) []string {
		out := []string{"", "", "", "", "", "", ""}
		if h == nil {
			return out
		}
		for _, c := range h.CPUs {
			if c.Name == "cpu" {
				out[0], out[1], out[2], out[3], out[4] = f(c.User), f(c.System), f(c.SoftIRQ), f(c.IRQ), f(c.Idle)
			}
		}
		name, k := udpmon.KernelPercent(h)
		out[5], out[6] = name, f(k)
		return out
	}
	row = append(row, host(p.SenderHost)...)
	row = append(row, host(p.ReceiverHost)...)
	row = append(row, u(udpmon.InterruptTotal(p.SenderHost)), u(udpmon.InterruptTotal(p.ReceiverHost)))
	var inErr, rcvbuf, sndbuf, noPorts string
	if s := p.ReceiverSNMP; s != nil {
		inErr, rcvbuf, noPorts = u(s.InErrors), u(s.RcvbufErrors), u(s.NoPorts)
	}
	if s := p.SenderSNMP; s != nil {
		sndbuf = u(s.SndbufErrors)
	}
	row = append(row, inErr, rcvbuf, sndbuf, noPorts)
	if a := p.LossAttribution; a != nil {
		row = append(row, i(a.Lost-a.Network), i(a.Network), a.Verdict)
	} else {
		row = append(row, "", "", "")
	}
	return append(row, f(p.AchievedSpacingP99Ns), strconv.FormatBool(p.SpacingNotHeld))
}

// UDPMonJSON writes a sweep as one JSON document, every point with its
// histograms and both hosts' counters.
type UDPMonJSON struct {
	W io.Writer
}

// Write renders a finished sweep.
func (j *UDPMonJSON) Write(sw *udpmon.Sweep) error {
	b, err := json.MarshalIndent(struct {
		Kind  string        `json:"kind"`
		Sweep *udpmon.Sweep `json:"sweep"`
	}{"udpmon", sw}, "", "  ")
	if err != nil {
		return err
	}
	_, err = j.W.Write(append(b, '\n'))
	return err
}
