// Package strftime renders times in the subset of C's strftime formats
// that iperf3 users give --timestamps: %c %Y %m %d %H %M %S %s %T %F %z
// and %%, as the C locale renders them.
package strftime

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// IperfDefault is iperf3's --timestamps format when none is given.
const IperfDefault = "%c "

// Check says whether format uses only the conversions Format knows.
func Check(format string) error {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		if i+1 == len(format) {
			return fmt.Errorf("a lone %% at the end; write %%%% for a percent sign")
		}
		i++
		if !strings.ContainsRune(known, rune(format[i])) {
			return fmt.Errorf("%%%c is not supported (supported: %%c %%Y %%m %%d %%H %%M %%S %%s %%T %%F %%z %%%%)", format[i])
		}
	}
	return nil
}

const known = "cYmdHMSsTFz%"

// Format renders t in format, which Check accepted; an unknown
// conversion is copied as it is.
func Format(format string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		ch := format[i]
		if ch != '%' || i+1 == len(format) {
			b.WriteByte(ch)
			continue
		}
		i++
		switch format[i] {
		case 'c': // the C locale's date and time: "Fri Dec  4 08:21:38 2026"
			fmt.Fprintf(&b, "%s %s %2d %02d:%02d:%02d %d", t.Weekday().String()[:3], t.Month().String()[:3],
				t.Day(), t.Hour(), t.Minute(), t.Second(), t.Year())
		case 'Y':
			b.WriteString(strconv.Itoa(t.Year()))
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'M':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case 'S':
			fmt.Fprintf(&b, "%02d", t.Second())
		case 's':
			b.WriteString(strconv.FormatInt(t.Unix(), 10))
		case 'T':
			fmt.Fprintf(&b, "%02d:%02d:%02d", t.Hour(), t.Minute(), t.Second())
		case 'F':
			fmt.Fprintf(&b, "%d-%02d-%02d", t.Year(), int(t.Month()), t.Day())
		case 'z':
			b.WriteString(t.Format("-0700"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}
