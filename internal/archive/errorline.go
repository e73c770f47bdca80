package archive

import "strings"

// ErrorLine is an error as a run's record keeps it: one line, its line
// breaks joined with "; ".
func ErrorLine(err error) string {
	return strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
}
