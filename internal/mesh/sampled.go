package mesh

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"sort"
	"time"

	"github.com/wireperf/wireperf/internal/schedule"
)

// A sampled group (`sampled: {hosts: [...], partners: K}`) tests each of
// its H hosts to K partners per period rather than to all H−1, and
// every ordered pair over `rotation` = ⌈(H−1)/K⌉ periods. Which pairs
// share a turn is a rule, not a draw:
//
//   - the hosts are put in an order that looks random but is a function
//     of the mesh's name, the group's name and each host's name (a hash),
//     so the same file always gives the same turns;
//   - with hosts at positions 0 … H−1 of that order, the pair at
//     distance d (1 ≤ d ≤ H−1) from position i is (i, (i+d) mod H);
//   - distance d takes turn (d−1) mod rotation.
//
// In each turn every host is the source of the same number of runs (at
// most K, as evenly spread as H−1 and K allow) and the destination of as
// many, each turn brings each host different partners, and after
// rotation periods every ordered pair has run once.
//
// A schedule over the group is K' = ⌈(H−1)/rotation⌉ ≤ K rotating tasks
// per source (package schedule), one per slot: slot k of source i runs,
// in turn t of each rotation, to the partner at distance
// k × rotation + t + 1, so its destinations are the distances
// k × rotation + 1 … (k+1) × rotation (the last slot's stop at H−1, and
// it has no run in the turns after). That is H × K' tasks, not one per
// ordered pair.
type sampling struct {
	order    []string // the hosts, by position
	rotation int      // periods for every pair to run once
	slots    int      // a source's tasks per schedule
	rounds   []int    // per turn: how many rounds its period is cut into
	first    []int    // per distance (by d): its first round in its turn's period
}

// Rounds: the exclusive runs of a turn take rounds, slots of equal
// length one after the other over the period. A round is runs of one
// distance that share no host, so exclusive runs of one round don't wait
// for each other: the pairs at distance d make cycles over the hosts
// (i → i+d → i+2d …), and alternate runs of a cycle take alternate rounds,
// with a third round for the last run of a cycle of odd length. A
// distance takes 2 or 3 rounds; a turn's distances take theirs one after
// the other.
//
// A round's runs are spread over its slot rather than started at one
// instant (at 1,000 hosts a round is some 500 runs, whose daemons would
// all reach the archive at once): the j-th of its n runs, in position
// order, starts j × usable ÷ n after the round's start, where usable is
// the slot less the run's reservation, so every run of the round ends
// before the next round starts and a host's runs still never overlap,
// across turns and periods too. A slot no longer than a reservation
// leaves nothing to spread over: its runs start at the round's start.

// sample is how a sampled group's pairs take their turns. hosts are the
// group's hosts, distinct. Its cost is O(H): the pairs themselves are
// walked only when tasks are made.
func sample(meshName, group string, hosts []string, partners int) *sampling {
	n := len(hosts)
	sm := &sampling{order: sampleOrder(meshName, group, hosts), rotation: 1}
	if n < 2 {
		return sm
	}
	sm.rotation = (n - 1 + partners - 1) / partners
	sm.slots = (n - 1 + sm.rotation - 1) / sm.rotation
	sm.rounds = make([]int, sm.rotation)
	sm.first = make([]int, n)
	for d := 1; d <= n-1; d++ {
		turn := (d - 1) % sm.rotation
		sm.first[d] = sm.rounds[turn]
		if (n/gcd(d, n))%2 == 1 {
			sm.rounds[turn] += 3
		} else {
			sm.rounds[turn] += 2
		}
	}
	return sm
}

// hosts is the group's size, H.
func (sm *sampling) hosts() int { return len(sm.order) }

// tasks is how many rotating tasks a schedule over the group makes.
func (sm *sampling) tasks() int { return sm.hosts() * sm.slots }

// pairCount is how many ordered pairs the group covers over a rotation.
func (sm *sampling) pairCount() int { return sm.hosts() * (sm.hosts() - 1) }

// slotLen is how many destinations slot k has: rotation, fewer for the
// last slot when rotation doesn't divide H−1.
func (sm *sampling) slotLen(k int) int { return min(sm.rotation, sm.hosts()-1-k*sm.rotation) }

// distanceRounds sets round[i] to the round, among distance d's own (0,
// 1 or 2), of the run from position i at distance d.
func (sm *sampling) distanceRounds(d int, round []int) {
	n := sm.hosts()
	cycles := gcd(d, n)
	length := n / cycles
	for c := range cycles {
		for j := range length {
			r := j % 2
			if length%2 == 1 && j == length-1 {
				r = 2
			}
			round[(c+j*d)%n] = r
		}
	}
}

// scheduleTasks are schedule s's rotating tasks over the group, one per source
// and slot, made by task (the schedule's task from a source to a first
// destination). Each repeats every rotation periods, its destinations
// at their turns' periods and, for exclusive runs, at their places in
// their rounds' slots in the period. A task's run count (max_runs) is per pair, as
// for a task of one pair.
func (sm *sampling) scheduleTasks(s Schedule, t Test, endpoints map[string]string, task func(source, dest, key string) *schedule.Task) []*schedule.Task {
	n := sm.hosts()
	if n < 2 {
		return nil
	}
	// By slot × H + source position; one backing array for them all.
	dests := make([][]schedule.Destination, sm.tasks())
	backing := make([]schedule.Destination, sm.pairCount())
	for k := range sm.slots {
		for i := range n {
			l := sm.slotLen(k)
			dests[k*n+i], backing = backing[:l:l], backing[l:]
		}
	}
	round := make([]int, n)
	rank := make([]int, n) // a run's place among its round's, in position order
	for d := 1; d <= n-1; d++ {
		k, turn := (d-1)/sm.rotation, (d-1)%sm.rotation
		at := time.Duration(turn) * s.Repeat
		var gap time.Duration // between the rounds of the turn's period
		var step [3]time.Duration
		if t.Class == schedule.Exclusive {
			sm.distanceRounds(d, round)
			gap = (s.Repeat / time.Duration(sm.rounds[turn])).Truncate(time.Millisecond)
			var size [3]int
			for i := range n {
				rank[i] = size[round[i]]
				size[round[i]]++
			}
			if usable := gap - t.Reserve; usable > 0 {
				for r, c := range size {
					if c > 0 {
						step[r] = usable / time.Duration(c)
					}
				}
			}
		}
		for i := range n {
			dest := sm.order[(i+d)%n]
			off := at
			if gap > 0 {
				// Whole milliseconds, as a full mesh's spread; j × step
				// ≤ usable, so no overflow.
				spread := (time.Duration(rank[i]) * step[round[i]]).Truncate(time.Millisecond)
				off += time.Duration(sm.first[d]+round[i])*gap + spread
			}
			dests[k*n+i][turn] = schedule.Destination{Host: dest, Addr: endpoints[dest], At: off}
		}
	}
	out := make([]*schedule.Task, 0, len(dests))
	for k := range sm.slots {
		for i := range n {
			ds := dests[k*n+i]
			// A slot is no host name: its ID is no pair's.
			tk := task(sm.order[i], ds[0].Host, fmt.Sprintf("slot %d", k))
			tk.Repeat = time.Duration(sm.rotation) * s.Repeat
			tk.Dests = ds
			tk.MaxRuns = s.MaxRuns * len(ds)
			out = append(out, tk)
		}
	}
	return out
}

// runsHolding is, per host, how many runs over a rotation hold it as
// source or destination: the runs of its rotating tasks and of its
// partners' tasks to it, walked as scheduleTasks lays them out.
func (sm *sampling) runsHolding() map[string]int {
	n := sm.hosts()
	count := make([]int, n)
	for k := range sm.slots {
		for turn := range sm.slotLen(k) {
			d := k*sm.rotation + turn + 1
			for i := range n {
				count[i]++
				count[(i+d)%n]++
			}
		}
	}
	out := make(map[string]int, n)
	for i, c := range count {
		if c > 0 {
			out[sm.order[i]] = c
		}
	}
	return out
}

// pairs are the group's ordered pairs, in turn order.
func (sm *sampling) pairs() []Pair {
	n := sm.hosts()
	out := make([]Pair, 0, sm.pairCount())
	for turn := 0; turn < sm.rotation; turn++ {
		for d := turn + 1; d <= n-1; d += sm.rotation {
			for i := range n {
				out = append(out, Pair{sm.order[i], sm.order[(i+d)%n]})
			}
		}
	}
	return out
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// sampleOrder is the hosts in the order of a hash of the mesh's name, the
// group's name and the host's name: stable for a file, unrelated to the
// order the file lists them in.
func sampleOrder(meshName, group string, hosts []string) []string {
	type keyed struct {
		key  [32]byte
		host string
	}
	ks := make([]keyed, len(hosts))
	for i, h := range hosts {
		ks[i] = keyed{sha256.Sum256([]byte(meshName + "\x00" + group + "\x00" + h)), h}
	}
	sort.Slice(ks, func(i, j int) bool {
		if c := bytes.Compare(ks[i].key[:], ks[j].key[:]); c != 0 {
			return c < 0
		}
		return ks[i].host < ks[j].host
	})
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.host
	}
	return out
}
