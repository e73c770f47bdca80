//go:build race

package race

// Enabled: the race detector slows every goroutine several times over,
// and instruments SQLite's Go code row by row.
const Enabled = true
