package archive

import "strings"

// InList is v as an SQL IN list: its placeholders ("?, ?, ?") and its
// arguments. The schedule's store (package taskstore) builds its block
// queries with it too.
func InList(v []string) (string, []any) {
	args := make([]any, len(v))
	for i, s := range v {
		args[i] = s
	}
	return placeholders(len(v)), args
}

// placeholders is n "?" joined by commas.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// EitherWay calls way(a, b), then way(b, a) unless a and b hold the same
// names: a query between two groups of hosts, in both directions, that
// reads a group with itself once.
func EitherWay(a, b []string, way func(srcs, dsts []string)) {
	way(a, b)
	if !sameSet(a, b) {
		way(b, a)
	}
}

// sameSet says whether a and b hold the same names.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	in := make(map[string]bool, len(a))
	for _, s := range a {
		in[s] = true
	}
	for _, s := range b {
		if !in[s] {
			return false
		}
	}
	return true
}
