//go:build soakleak

package server

// soakLeakPerTest is what a soakleak build keeps for each accepted test:
// bench/soak.sh must catch it. Only `go build -tags soakleak` has it; a
// normal build's soakLeak does nothing.
const soakLeakPerTest = 64 << 10

// soakLeak holds soakLeakPerTest bytes for every test accepted since the
// server started, topped up at each status line.
type soakLeak struct {
	held    [][]byte
	counted int64
}

func (l *soakLeak) note() string {
	return "this is a soakleak build: it keeps 64 KiB for every accepted test, on purpose"
}

func (l *soakLeak) add(accepted int64) {
	for ; l.counted < accepted; l.counted++ {
		b := make([]byte, soakLeakPerTest)
		for i := range b {
			b[i] = byte(i) // touched, so RSS holds it too
		}
		l.held = append(l.held, b)
	}
}
