package units

import "strconv"

// Count prints n things: "1 point", "0 points", "483 points". noun is
// the singular and takes an "s" in the plural.
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
