#!/usr/bin/env bash
# The impairment lab at 215 ms RTT and 1 Gbit/s (a submarine cable to a
# 1 Gbit/s server), with wireperf's sender and receiver on the same
# machine as the lab's router:
#  1. UDP `-u -b RATE -t SECS` (750m, 30 s by default): the rate the
#     sender held (its own count ÷ the rate asked), the loss the receiver
#     saw;
#  2. TCP, 4 streams for TCP_SECS (20 s), with 64 MiB socket buffers in
#     the hosts so that the path, not the window, is the limit: goodput;
# and for each run the router's drops by reason (loss, queue, limit, the
# TUN devices' own queue) and the router process's CPU (user + system, in
# % of one core) over the run. Every figure comes with the load average:
# the machine may be shared. Needs root. The lab's namespaces carry a
# name unique to this run and are removed on exit.
#
#   WIREPERF=./wireperf RATE=750m SECS=30 TCP_SECS=20 bench/lab.sh
set -euo pipefail
WP=${WIREPERF:-./wireperf}
RATE=${RATE:-750m}
SECS=${SECS:-30}
TCP_SECS=${TCP_SECS:-20}
STREAMS=${STREAMS:-4}
NAME=bl$$
[ "$(id -u)" = 0 ] || { echo "bench/lab.sh: needs root (network namespaces, TUN devices)" >&2; exit 1; }
[ -x "$WP" ] || { echo "bench/lab.sh: $WP is not executable (set WIREPERF)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench/lab.sh: python3 not found" >&2; exit 1; }

SERVER=
cleanup() {
	[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
	"$WP" lab down "$NAME" >/dev/null 2>&1 || true
}
trap cleanup EXIT

"$WP" lab up "$NAME" --rtt 215ms --rate 1g >/dev/null
for h in a b; do
	"$WP" lab exec "$NAME" "$h" -- sysctl -q -w net.ipv4.tcp_rmem="4096 131072 67108864" \
		net.ipv4.tcp_wmem="4096 16384 67108864" >/dev/null
done
"$WP" lab exec "$NAME" b -- "$WP" -s --log-level error >/dev/null 2>&1 &
SERVER=$!
for _ in $(seq 50); do
	"$WP" lab exec "$NAME" b -- ss -Hlnt "sport = :5201" 2>/dev/null | grep -q . && break
	sleep 0.1
done
RPID=$(cat "/run/wireperf/lab-$NAME.pid")
TMP=$(mktemp -d)
trap 'cleanup; rm -rf "$TMP"' EXIT

cpu_ticks() { awk '{print $14+$15}' "/proc/$RPID/stat"; }
status() { "$WP" lab status "$NAME" --json; }

# run LABEL ARGS...: one client run in host a, with the router's counters
# and CPU around it.
run() {
	local label=$1
	shift
	sleep 1.2
	status >"$TMP/before.json"
	local t0 c0 load
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	t0=$(date +%s.%N)
	c0=$(cpu_ticks)
	"$WP" lab exec "$NAME" a -- "$WP" -c 10.77.2.2 -J "$@" >"$TMP/run.json" || true
	local c1 t1
	c1=$(cpu_ticks)
	t1=$(date +%s.%N)
	sleep 1.2 # the router writes its counters every second
	status >"$TMP/after.json"
	python3 - "$label" "$*" "$load" "$t0" "$t1" "$c0" "$c1" "$(getconf CLK_TCK)" "$TMP" <<'EOF'
import json, sys
label, args, load, t0, t1, c0, c1, hz, tmp = sys.argv[1:]
wall = float(t1) - float(t0)
cpu = (int(c1) - int(c0)) / int(hz) / wall * 100
try:
    d = json.load(open(tmp + "/run.json"))
    e = d["end"]
except Exception as ex:
    print(f"{label}: client gave no result ({ex})")
    d, e = {}, {}
def dirs(path):
    s = json.load(open(path))
    st = s.get("router") or {}
    return st
b, a = dirs(tmp + "/before.json"), dirs(tmp + "/after.json")
def delta(key, field):
    return (a.get(key, {}).get(field, 0) or 0) - (b.get(key, {}).get(field, 0) or 0)
def tun(key):
    x = (a.get(key, {}).get("tun_in") or {}).get("tx_dropped", 0) - (b.get(key, {}).get("tun_in") or {}).get("tx_dropped", 0)
    return x
print(f"{label}: wireperf -c 10.77.2.2 {args}   (load average {load})")
if "sum_sent" in e or "sum" in e:
    if "-u" in args.split():
        s = e.get("sum", {})
        sent = e.get("sum_sent", s)
        want = None
        for i, w in enumerate(args.split()):
            if w == "-b":
                r = args.split()[i + 1]
                m = {"k": 1e3, "m": 1e6, "g": 1e9}.get(r[-1].lower(), 1)
                want = float(r.rstrip("kmgKMG")) * m
        held = sent.get("bits_per_second", 0)
        rcv = e.get("sum_received", s)
        print(f"  sender held {held/1e6:.1f} Mbit/s" + (f" ({held/want*100:.2f}% of the rate)" if want else "")
              + f"; received {rcv.get('bits_per_second', 0)/1e6:.1f} Mbit/s; lost {s.get('lost_packets', 0)} of {s.get('packets', 0)} datagrams ({s.get('lost_percent', 0):.4f}%)")
        for l in (d.get("wireperf") or {}).get("udp_loss") or []:
            print(f"  of the loss: {l.get('receiver_rcvbuf_errors', 0)} in the receiver's socket buffer, {l.get('network', 0)} in the network (the router)")
    else:
        print(f"  goodput {e.get('sum_received', {}).get('bits_per_second', 0)/1e6:.1f} Mbit/s received, {e.get('sum_sent', {}).get('retransmits', 0)} retransmits")
for key, name in (("a_to_b", "a→b"), ("b_to_a", "b→a")):
    print(f"  router {name}: in {delta(key, 'in')}, out {delta(key, 'out')}, dropped: loss {delta(key, 'dropped_loss')}, "
          f"queue {delta(key, 'dropped_queue')}, limit {delta(key, 'dropped_limit')}, TUN queue {tun(key)}, "
          f"write errors {delta(key, 'write_errors')}; writes {delta(key, 'writes')}")
print(f"  router CPU {cpu:.1f}% of a core over {wall:.1f} s")
EOF
}

run "UDP" -u -b "$RATE" -t "$SECS"
run "TCP" -P "$STREAMS" -t "$TCP_SECS"
