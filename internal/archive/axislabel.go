package archive

import (
	"math"
	"strconv"
	"time"
)

// CanonicalAxis is an axis value as every table, report and figure shows
// it, whatever wrote it: a native run's "-w 4m", an iperf2 log's "64.0
// KByte" and a -J document's 65536 all read alike (4M, 64K). A word
// (direction, proto, an iperf2 log's "default" window) is kept as it is.
func CanonicalAxis(axis string, a Axis) Axis {
	if a.Num == nil {
		return a
	}
	v := *a.Num
	switch axis {
	case "window", "length":
		a.Label = compact(v, 1024)
	case "bitrate":
		a.Label = compact(v, 1000)
	case "time":
		a.Label = strconv.FormatFloat(v, 'f', -1, 64) + "s"
	case "spacing":
		a.Label = time.Duration(math.Round(v * float64(time.Second))).String()
	default:
		a.Label = a.Key()
	}
	return a
}

// compact writes v in the largest of K, M, G and T (powers of base) it
// reaches, to two decimals at most: 65536 is 64K, 1572864 is 1.5M.
func compact(v float64, base float64) string {
	suffix := ""
	for _, s := range []string{"K", "M", "G", "T"} {
		if math.Abs(v) < base {
			break
		}
		v /= base
		suffix = s
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) + suffix
}
