package emit

import (
	"fmt"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

// The column layouts, shared by the column headers and the rows so the
// two cannot drift apart. The first columns follow iperf3's widths.
const (
	// tag, interval, then the sender's transfer, bitrate, Retr, Cwnd and
	// RTT, then the receiver's transfer and bitrate.
	intervalLayout = "%s %-17s  %-11s  %-14s  %4s  %-11s  %7s | %-11s  %s"
	// One end's rows (Text.OneEnd): tag, interval, transfer, bitrate,
	// and when that end sends, Retr, Cwnd and RTT: the sender's half of
	// intervalLayout.
	oneEndLayout         = "%s %-17s  %-11s  %-14s  %4s  %-11s  %7s"
	oneEndReceiverLayout = "%s %-17s  %-11s  %-14s"
	// tag, interval, transfer, bitrate, Retr, "sender" or "receiver".
	totalLayout = "%s %-17s  %-11s  %-14s  %4s  %s"
	// UDP: tag, interval, the sender's transfer, bitrate and datagrams
	// sent, then the receiver's transfer, goodput, jitter and lost/total.
	// Each side's rate column is as wide as its longest figure, so the
	// receiver's half lines up with the sender's.
	udpIntervalLayout = "%s %-17s  %-11s  %-14s  %-15s | %-11s  %-14s  %-8s  %s"
	// One end's UDP rows (Text.OneEnd): a receiver's tag, interval,
	// transfer, bitrate, jitter and lost/total, as iperf3's server prints
	// them; a sender's datagrams instead of the last two.
	udpOneEndReceiverLayout = "%s %-17s  %-11s  %-14s  %-8s  %s"
	udpOneEndSenderLayout   = "%s %-17s  %-11s  %-14s  %s"
	// UDP: tag, interval, transfer, bitrate, jitter, lost/total (or the
	// datagrams sent), "sender" or "receiver".
	udpTotalLayout = "%s %-17s  %-11s  %-14s  %-8s  %-20s  %s"
	// placeholder for a figure the report of that end lacks.
	missing = "-"
)

func intervalColumns(bidir bool) string {
	// The sender's transfer is what it wrote, as iperf3 counts it: its
	// socket buffer can take more than the path carries. The receiver's is
	// what its kernel took in.
	return fmt.Sprintf(intervalLayout, idColumn(bidir), "Interval", "Written", "Bitrate", "Retr", "Cwnd", "RTT", "Received", "Goodput")
}

func oneEndColumns(bidir bool) string {
	return fmt.Sprintf(oneEndLayout, idColumn(bidir), "Interval", "Transfer", "Bitrate", "Retr", "Cwnd", "RTT")
}

func totalColumns(bidir bool) string {
	return fmt.Sprintf(totalLayout, idColumn(bidir), "Interval", "Transfer", "Bitrate", "Retr", "")
}

func udpIntervalColumns(bidir bool) string {
	return fmt.Sprintf(udpIntervalLayout, idColumn(bidir), "Interval", "Transfer", "Bitrate", "Total Datagrams",
		"Received", "Goodput", "Jitter", "Lost/Total Datagrams")
}

func udpTotalColumns(bidir bool) string {
	return fmt.Sprintf(udpTotalLayout, idColumn(bidir), "Interval", "Transfer", "Bitrate", "Jitter", "Lost/Total Datagrams", "")
}

func idColumn(bidir bool) string {
	if bidir {
		return "[ ID][Role]"
	}
	return "[ ID]"
}

// flowTag names a flow: "[  1]", or with --bidir "[  1][TX-C]" when the
// client sends on it and "[  1][RX-C]" when it receives, as iperf3 does.
func flowTag(id int, senderRole string, bidir bool) string {
	return fmt.Sprintf("[%3d]", id) + roleTag(senderRole, bidir)
}

func sumTag(senderRole string, bidir bool) string {
	return "[SUM]" + roleTag(senderRole, bidir)
}

func roleTag(senderRole string, bidir bool) string {
	switch {
	case !bidir:
		return ""
	case senderRole == result.RoleServer:
		return "[RX-C]"
	default:
		return "[TX-C]"
	}
}

// timeSpan renders "  0.00-1.00   sec".
func timeSpan(start, end float64) string {
	return fmt.Sprintf("%6.2f-%-6.2f sec", start, end)
}

// amounts renders bytes over seconds as the Transfer and Bitrate cells,
// numbers padded to four columns so that they line up.
func amounts(bytes int64, seconds float64, f units.Format) (transfer, rate string) {
	transfer, rate = units.FormatTransfer(float64(bytes), f), units.FormatRate(result.Rate(bytes, seconds), f)
	if seconds < minRateSpan && bytes > 0 {
		// Over microseconds a rate is that of a socket buffer filling, not
		// of the path: 1 MB in 20 µs reads 400 Gbit/s.
		rate = fmt.Sprintf("%*s", len(rate), missing)
	}
	return transfer, rate
}

// minRateSpan is the shortest span, in seconds, whose rate is shown.
const minRateSpan = 0.001

// window renders a congestion window; like iperf3, always in an adaptive
// byte unit whatever -f says, since it is a size, not a transfer.
func window(bytes uint64) string {
	return units.FormatTransfer(float64(bytes), units.AdaptiveBytes)
}

// rtt renders microseconds as "45us" below a millisecond, else "12.35ms".
func rtt(us uint32) string {
	if us < 1000 {
		return fmt.Sprintf("%dus", us)
	}
	return fmt.Sprintf("%.2fms", float64(us)/1000)
}
