package mesh

import (
	"bytes"
	"crypto/sha256"
	"sort"
)

// A sampled group (`sampled: {hosts: [...], partners: K}`) tests each of
// its H hosts to K partners per period rather than to all H−1, and
// every ordered pair over `rotation` = ⌈(H−1)/K⌉ periods. It fits the
// schedule model as it is (a task is one ordered pair with a start and a
// repeat, planned by its source's daemon): each pair is a task that
// repeats every rotation × the schedule's repeat, starting in its turn's
// period. Which pairs share a turn is a rule, not a draw:
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
type sampling struct {
	rotation int   // periods for every pair to run once
	turn     []int // per pair of the group (by index): the period of the rotation it runs in
	round    []int // per pair: its round in its turn's period
	rounds   []int // per turn: how many rounds its period is cut into
}

// Rounds: the runs of a turn start in rounds spread evenly over the
// period, each round's runs at one instant. A round is runs of one
// distance that share no host, so exclusive runs of one round don't wait
// for each other: the pairs at distance d make cycles over the hosts
// (i → i+d → i+2d …), and alternate runs of a cycle take alternate rounds,
// with a third round for the last run of a cycle of odd length. A
// distance takes 2 or 3 rounds; a turn's distances take theirs one after
// the other.

// sample is a sampled group's ordered pairs, in turn order, and when
// each runs. hosts are the group's hosts, distinct.
func sample(meshName, group string, hosts []string, partners int) ([]Pair, *sampling) {
	n := len(hosts)
	sm := &sampling{rotation: 1}
	if n < 2 {
		return nil, sm
	}
	order := sampleOrder(meshName, group, hosts)
	sm.rotation = (n - 1 + partners - 1) / partners
	sm.rounds = make([]int, sm.rotation)
	pairs := make([]Pair, 0, n*(n-1))
	for turn := 0; turn < sm.rotation; turn++ {
		for d := turn + 1; d <= n-1; d += sm.rotation {
			cycles := gcd(d, n)
			length := n / cycles
			for c := range cycles {
				for j := range length {
					i := (c + j*d) % n
					pairs = append(pairs, Pair{order[i], order[(i+d)%n]})
					sm.turn = append(sm.turn, turn)
					r := j % 2
					if length%2 == 1 && j == length-1 {
						r = 2
					}
					sm.round = append(sm.round, sm.rounds[turn]+r)
				}
			}
			if length%2 == 1 {
				sm.rounds[turn] += 3
			} else {
				sm.rounds[turn] += 2
			}
		}
	}
	return pairs, sm
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
