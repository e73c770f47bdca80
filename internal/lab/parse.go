package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// QdiscStats are one qdisc's counters from `tc -s qdisc show`.
type QdiscStats struct {
	Kind        string `json:"kind"`   // tbf, htb, bfifo, ...
	Handle      string `json:"handle"` // "1:"
	Parent      string `json:"parent"` // "root" or "1:10"
	SentBytes   uint64 `json:"sent_bytes"`
	SentPackets uint64 `json:"sent_packets"`
	Dropped     uint64 `json:"dropped"`
	Overlimits  uint64 `json:"overlimits"`
	Requeues    uint64 `json:"requeues"`
	// Backlog at the time of reading. tc rounds bytes above 1 KiB (it
	// prints "12Kb"), so BacklogBytes is approximate; packets are exact.
	BacklogBytes   uint64 `json:"backlog_bytes"`
	BacklogPackets uint64 `json:"backlog_packets"`
}

// ParseQdiscStats parses the text of `tc -s qdisc show [dev DEV]`:
//
//	qdisc tbf 1: root refcnt 2 rate 1Gbit burst 125000b lat 7ms
//	 Sent 2070 bytes 15 pkt (dropped 0, overlimits 0 requeues 0)
//	 backlog 0b 0p requeues 0
//
// Lines it does not know are skipped; a qdisc line without its counters
// yields zero counters.
func ParseQdiscStats(text string) ([]QdiscStats, error) {
	var out []QdiscStats
	var cur *QdiscStats
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "qdisc":
			if len(f) < 4 {
				return nil, fmt.Errorf("lab: short qdisc line %q", line)
			}
			q := QdiscStats{Kind: f[1], Handle: f[2]}
			switch f[3] {
			case "root", "ingress", "clsact":
				q.Parent = f[3]
			case "parent":
				if len(f) < 5 {
					return nil, fmt.Errorf("lab: qdisc line without parent: %q", line)
				}
				q.Parent = f[4]
			default:
				q.Parent = f[3]
			}
			out = append(out, q)
			cur = &out[len(out)-1]
		case "Sent":
			if cur == nil {
				return nil, fmt.Errorf("lab: counters before any qdisc: %q", line)
			}
			// Sent B bytes P pkt (dropped D, overlimits O requeues R)
			if len(f) < 5 || f[2] != "bytes" || f[4] != "pkt" {
				return nil, fmt.Errorf("lab: bad Sent line %q", line)
			}
			var err error
			if cur.SentBytes, err = strconv.ParseUint(f[1], 10, 64); err != nil {
				return nil, fmt.Errorf("lab: bad sent bytes in %q", line)
			}
			if cur.SentPackets, err = strconv.ParseUint(f[3], 10, 64); err != nil {
				return nil, fmt.Errorf("lab: bad sent packets in %q", line)
			}
			rest := strings.NewReplacer("(", " ", ")", " ", ",", " ").Replace(strings.Join(f[5:], " "))
			kv := strings.Fields(rest)
			for i := 0; i+1 < len(kv); i += 2 {
				v, err := strconv.ParseUint(kv[i+1], 10, 64)
				if err != nil {
					return nil, fmt.Errorf("lab: bad %s in %q", kv[i], line)
				}
				switch kv[i] {
				case "dropped":
					cur.Dropped = v
				case "overlimits":
					cur.Overlimits = v
				case "requeues":
					cur.Requeues = v
				}
			}
		case "backlog":
			if cur == nil {
				return nil, fmt.Errorf("lab: backlog before any qdisc: %q", line)
			}
			if len(f) < 3 {
				return nil, fmt.Errorf("lab: bad backlog line %q", line)
			}
			b, err := parseTCSize(f[1])
			if err != nil {
				return nil, fmt.Errorf("lab: bad backlog bytes in %q", line)
			}
			p, err := strconv.ParseUint(strings.TrimSuffix(f[2], "p"), 10, 64)
			if err != nil || !strings.HasSuffix(f[2], "p") {
				return nil, fmt.Errorf("lab: bad backlog packets in %q", line)
			}
			cur.BacklogBytes, cur.BacklogPackets = b, p
		}
	}
	return out, nil
}

// parseTCSize reads tc's sizes: "1514b", "12Kb", "1.5Mb" (binary units).
func parseTCSize(s string) (uint64, error) {
	if !strings.HasSuffix(s, "b") {
		return 0, errors.New("no b suffix")
	}
	s = strings.TrimSuffix(s, "b")
	mult := 1.0
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		}
		if mult != 1 {
			s = s[:n-1]
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v*mult > 1e19 || v != v {
		return 0, errors.New("bad size")
	}
	return uint64(v * mult), nil
}

// Root returns the root qdisc of a device's list, or false.
func Root(qs []QdiscStats) (QdiscStats, bool) {
	for _, q := range qs {
		if q.Parent == "root" {
			return q, true
		}
	}
	return QdiscStats{}, false
}

// ParseLinkStats reads the JSON of `ip -s -j link show dev DEV`.
func ParseLinkStats(js []byte) (LinkStats, error) {
	var v []struct {
		IfName  string `json:"ifname"`
		Stats64 *struct {
			Rx struct {
				Bytes, Packets, Errors, Dropped uint64
			} `json:"rx"`
			Tx struct {
				Bytes, Packets, Errors, Dropped uint64
			} `json:"tx"`
		} `json:"stats64"`
	}
	if err := json.Unmarshal(js, &v); err != nil {
		return LinkStats{}, fmt.Errorf("lab: ip -s -j link: %w", err)
	}
	if len(v) != 1 || v[0].Stats64 == nil {
		return LinkStats{}, errors.New("lab: ip -s -j link: want one device with stats64")
	}
	s := v[0].Stats64
	return LinkStats{
		RxPackets: s.Rx.Packets, RxBytes: s.Rx.Bytes, RxErrors: s.Rx.Errors, RxDropped: s.Rx.Dropped,
		TxPackets: s.Tx.Packets, TxBytes: s.Tx.Bytes, TxErrors: s.Tx.Errors, TxDropped: s.Tx.Dropped,
	}, nil
}

// parseSNMP reads one protocol's counters from /proc/net/snmp text (a
// line of names, then a line of values).
func parseSNMP(text, proto string) (map[string]uint64, error) {
	var names []string
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != proto+":" {
			continue
		}
		if names == nil {
			names = f[1:]
			continue
		}
		if len(f)-1 != len(names) {
			return nil, fmt.Errorf("lab: /proc/net/snmp %s: %d names, %d values", proto, len(names), len(f)-1)
		}
		m := map[string]uint64{}
		for i, n := range names {
			v, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				// Some counters are signed (Tcp MaxConn is -1).
				iv, err2 := strconv.ParseInt(f[i+1], 10, 64)
				if err2 != nil {
					return nil, fmt.Errorf("lab: /proc/net/snmp %s %s: %w", proto, n, err)
				}
				v = uint64(iv)
			}
			m[n] = v
		}
		return m, nil
	}
	return nil, fmt.Errorf("lab: /proc/net/snmp has no %s counters", proto)
}
