package emit

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/wireperf/wireperf/internal/result"
)

// tcpTimelineColumns are the CSV's header: which stream, then one
// TCP_INFO sample (result.TCPSample, same names and units).
var tcpTimelineColumns = []string{
	"stream", "direction", "sender_role", "t",
	"rtt_us", "rttvar_us", "min_rtt_us", "snd_mss", "snd_cwnd_segs", "snd_ssthresh_segs", "total_retrans",
	"pacing_rate", "delivery_rate", "bytes_acked", "bytes_retrans", "notsent_bytes", "snd_wnd", "rcv_wnd",
	"busy_time_us", "rwnd_limited_us", "sndbuf_limited_us", "bbr_bw", "bbr_min_rtt_us",
}

// WriteTCPTimelineCSV writes every sending stream's TCP_INFO timeline as
// CSV (--tcpinfo-csv): a header, then one row per sample, stream by
// stream. t is seconds since the sending end's test start. A result
// without timelines gives the header alone.
func WriteTCPTimelineCSV(w io.Writer, r *result.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(tcpTimelineColumns); err != nil {
		return err
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	for _, d := range r.Directions() {
		for _, f := range d.Flows {
			if f.Sent == nil || f.Sent.TCPTimeline == nil {
				continue
			}
			for _, s := range f.Sent.TCPTimeline.Samples {
				row := []string{
					strconv.Itoa(f.ID), d.Label(), d.SenderRole, strconv.FormatFloat(s.T, 'f', 6, 64),
					u(uint64(s.RTTus)), u(uint64(s.RTTVarus)), u(uint64(s.MinRTTus)), u(uint64(s.SndMSS)),
					u(uint64(s.SndCwnd)), u(uint64(s.SndSsthresh)), u(uint64(s.TotalRetrans)),
					u(s.PacingRate), u(s.DeliveryRate), u(s.BytesAcked), u(s.BytesRetrans), u(uint64(s.NotsentBytes)),
					u(uint64(s.SndWnd)), u(uint64(s.RcvWnd)),
					u(s.BusyUs), u(s.RwndLimitedUs), u(s.SndbufLimitedUs), u(s.BBRBandwidth), u(uint64(s.BBRMinRTTus)),
				}
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
