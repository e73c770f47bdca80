package lab

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// EnvLab names the lab a command runs in: "wireperf lab exec" sets it, so
// that a test run through a lab can say when the lab's router, not the
// path it emulates, limited it.
const EnvLab = "WIREPERF_LAB"

// Lateness is a lab router's late departures, over both directions: the
// packets it released more than impair.LateRelease after their time,
// because it ran late (a busy host descheduled it).
type Lateness struct {
	Packets uint64
	MaxUs   uint64
	// LostUs is the time the router's output stood idle while packets
	// were due, beyond what it could catch up, summed over directions.
	LostUs  uint64
	Updated time.Time // when the router wrote the counters
}

// LatenessOf reads a running lab's late departures from its status.
func LatenessOf(name string) (Lateness, error) {
	st, err := Status(name)
	if err != nil {
		return Lateness{}, err
	}
	if !st.Running {
		return Lateness{}, fmt.Errorf("lab %q: its router is not running", name)
	}
	l := Lateness{Updated: st.Updated}
	for _, d := range []DirStats{st.Router.AtoB, st.Router.BtoA} {
		l.Packets += d.ReleasedLate
		l.MaxUs = max(l.MaxUs, d.MaxLateUs)
		l.LostUs += d.OutputLostUs
	}
	return l, nil
}

// RouterWatch notes a lab router's late departures before a test, so
// that Behind can say whether the router fell behind during it.
type RouterWatch struct {
	name    string
	start   time.Time
	before  Lateness
	buffers TCPBuffers
	// rmem and wmem are the namespace's own autotuning limits, read when
	// the watch began: a lab's hosts may have been retuned since lab up.
	rmem, wmem string
}

// WatchRouter starts watching the lab the process runs in (EnvLab); nil
// outside a lab, or when its status cannot be read.
func WatchRouter() *RouterWatch {
	name := os.Getenv(EnvLab)
	if name == "" {
		return nil
	}
	l, err := LatenessOf(name)
	if err != nil {
		return nil
	}
	w := &RouterWatch{name: name, start: time.Now(), before: l}
	if st, err := Status(name); err == nil {
		w.buffers = st.TCPBuffers
	}
	w.rmem, w.wmem = readSysctl("net/ipv4/tcp_rmem"), readSysctl("net/ipv4/tcp_wmem")
	return w
}

// readSysctl is a sysctl of the process's network namespace, "" when it
// can't be read.
func readSysctl(name string) string {
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return ""
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// Line says which lab a report's test ran through and its hosts' TCP
// buffers (lab up --tcp-buffers), which decide what a long path carries:
// stock Linux's 4 MiB send buffer holds one stream to about 156 Mbit/s at
// 215 ms where big ones let it fill a gigabit. "" outside a lab. Every
// report run through a lab shows it once, beside the router's check.
func (w *RouterWatch) Line() string {
	if w == nil {
		return ""
	}
	return fmt.Sprintf("run through the lab %q: this host's TCP buffers are %s", w.name, buffersText(w.buffers, w.rmem, w.wmem))
}

// buffersText names the TCP buffers a host runs with: the lab's choice
// when the namespace's sysctls (rmem, wmem; "" unread) are its values,
// else the values, set by hand after lab up.
func buffersText(chosen TCPBuffers, rmem, wmem string) string {
	if rmem == "" || wmem == "" {
		return chosen.Text()
	}
	for _, b := range []TCPBuffers{BuffersStock, BuffersBig} {
		if s := b.Sysctls(); s["net.ipv4.tcp_rmem"] == rmem && s["net.ipv4.tcp_wmem"] == wmem {
			return b.Text()
		}
	}
	return fmt.Sprintf("set by hand, neither lab up's stock nor big (tcp_rmem %s, tcp_wmem %s)", rmem, wmem)
}

// Behind reads the router's counters once they cover the test's end
// (the router writes them every second; it waits at most wait) and says,
// in one line, how far it fell behind during the test; "" when it kept up.
func (w *RouterWatch) Behind(end time.Time, wait time.Duration) string {
	if w == nil {
		return ""
	}
	deadline := time.Now().Add(wait)
	var after Lateness
	for {
		l, err := LatenessOf(w.name)
		if err != nil {
			return ""
		}
		after = l
		if !l.Updated.Before(end) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond) // the router's next status write
	}
	return behindLine(w.name, w.before, after, end.Sub(w.start))
}

// RouterWait is how long a command run through a lab waits for its
// router's counters to cover the test's end: the router writes them every
// second.
const RouterWait = 2500 * time.Millisecond

// BehindLines is Behind over the test ending at end, with RouterWait, as
// a report's warnings: none when the router kept up, or outside a lab.
func (w *RouterWatch) BehindLines(end time.Time) []string {
	if line := w.Behind(end, RouterWait); line != "" {
		return []string{line}
	}
	return nil
}

// LostShare is the share of a test's time the router's output may lose
// before the test is told that the lab limited it: a 0.5% shortfall is
// within what a row may read under the path's capacity anyway.
const LostShare = 0.005

// behindLine says how far the router fell behind between two readings,
// over a test of span: "" when its output lost less than LostShare of it.
func behindLine(name string, before, after Lateness, span time.Duration) string {
	lost := time.Duration(after.LostUs-min(after.LostUs, before.LostUs)) * time.Microsecond
	if span <= 0 || float64(lost) < LostShare*float64(span) {
		return ""
	}
	late := after.Packets - min(after.Packets, before.Packets)
	return fmt.Sprintf("the lab %q's router fell behind: its output stood idle %.0f ms of the test's %.1f s (%.1f%%) while packets were due, "+
		"and %d packets left more than 1 ms late: the lab, not the path it emulates, limited this test",
		name, float64(lost)/1e6, span.Seconds(), 100*float64(lost)/float64(span), late)
}

// DirCount is one direction's packets into a lab router and those it lost
// (DirStats.Lost: its drops of every kind, the TUN queue's included), of
// which Queue its rate cap's full queue dropped.
type DirCount struct {
	In, Lost, Queue uint64
}

// Counts are a lab router's DirCounts at one time.
type Counts struct {
	AtoB, BtoA DirCount
	Updated    time.Time // when the router wrote them
}

// CountsOf takes the DirCounts out of a router's statistics.
func CountsOf(rs RouterStats) Counts {
	return Counts{
		AtoB: DirCount{In: rs.AtoB.In, Lost: rs.AtoB.Lost(), Queue: rs.AtoB.DroppedQueue},
		BtoA: DirCount{In: rs.BtoA.In, Lost: rs.BtoA.Lost(), Queue: rs.BtoA.DroppedQueue},
	}
}

// Counts reads the router's counters once they cover end (the router
// writes its status every second; it waits at most wait, then returns
// what it has).
func (w *RouterWatch) Counts(end time.Time, wait time.Duration) (Counts, error) {
	if w == nil {
		return Counts{}, fmt.Errorf("not run through a lab")
	}
	deadline := time.Now().Add(wait)
	for {
		st, err := Status(w.name)
		if err != nil {
			return Counts{}, err
		}
		if !st.Running {
			return Counts{}, fmt.Errorf("lab %q: its router is not running", w.name)
		}
		if !st.Updated.Before(end) || time.Now().After(deadline) {
			c := CountsOf(st.Router)
			c.Updated = st.Updated
			return c, nil
		}
		time.Sleep(100 * time.Millisecond) // the router's next status write
	}
}

// Name is the lab's name.
func (w *RouterWatch) Name() string {
	if w == nil {
		return ""
	}
	return w.name
}
