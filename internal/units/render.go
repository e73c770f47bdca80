package units

import (
	"fmt"
	"math"
)

// Unit names by power, as iperf prints them.
var (
	transferUnits = []string{"Bytes", "KBytes", "MBytes", "GBytes", "TBytes"}
	bitRateUnits  = []string{"bits/sec", "Kbits/sec", "Mbits/sec", "Gbits/sec", "Tbits/sec"}
	byteRateUnits = []string{"Bytes/sec", "KBytes/sec", "MBytes/sec", "GBytes/sec", "TBytes/sec"}
)

// FormatTransfer renders a byte count for the Transfer column: always in a
// byte unit (KBytes = 1024 B). A bit letter picks the byte unit of the
// same scale ('k' prints KBytes) and 'a' or 'A' picks one to fit. The
// number is padded to four columns like iperf's, e.g. " 515 MBytes".
func FormatTransfer(bytes float64, f Format) string {
	return scaled(bytes, 1024, f.scale(), transferUnits)
}

// FormatRate renders bits per second: a bit letter in bits/sec by powers
// of 1000, a byte letter in bytes/sec by powers of 1024, 'a' and 'A'
// adaptive in those units. Padded like FormatTransfer.
func FormatRate(bitsPerSecond float64, f Format) string {
	if f.Bytes() {
		return scaled(bitsPerSecond/8, 1024, f.scale(), byteRateUnits)
	}
	return scaled(bitsPerSecond, 1000, f.scale(), bitRateUnits)
}

// scaled divides v by base^power, or for power -1 by the largest power
// that keeps the printed figure below base, and prints it with about
// three significant figures.
func scaled(v, base float64, power int, names []string) string {
	if power < 0 {
		// Step up once the printed figure would round to base: 1023.6
		// KBytes reads better as "1.00 MBytes" than as "1024 KBytes".
		power = 0
		for power < len(names)-1 && math.Abs(v) >= base-0.5 {
			v /= base
			power++
		}
	} else {
		v /= math.Pow(base, float64(power))
	}
	return threeFigures(v) + " " + names[power]
}

// threeFigures prints v like iperf: two decimals below 10, one below 100,
// none above, switching where rounding would add a digit (9.995 prints
// "10.0", not "10.00"). Four columns wide so report columns line up.
func threeFigures(v float64) string {
	switch a := math.Abs(v); {
	case a < 9.995:
		return fmt.Sprintf("%4.2f", v)
	case a < 99.95:
		return fmt.Sprintf("%4.1f", v)
	default:
		return fmt.Sprintf("%4.0f", v)
	}
}
