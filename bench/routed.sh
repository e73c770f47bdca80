#!/usr/bin/env bash
# Paced UDP through a router: two network namespaces joined by a third
# that forwards in the kernel (no shaping), wireperf beside iperf3 at the
# same settings. For each tool: the rate the sender held (sent ÷
# requested), what arrived, the loss, and each side's CPU (the sending
# client's and the receiving server's process, as each tool reports it in
# -J). wireperf's report names what held its rate back when it fell short
# of 99%: the line is printed as it is. Needs root; the namespaces have
# unique names and are removed on exit. Traffic stays inside them.
#
#   IPERF3=/path/to/iperf3 bench/routed.sh [path/to/wireperf] [seconds] [rate]
set -euo pipefail
WP=$(realpath "${1:-./wireperf}")
SECS=${2:-5}
RATE=${3:-300m}
IPERF3=${IPERF3:-iperf3}
. "$(dirname "$0")/lib.sh"
need ip "apt-get install iproute2"
need "$IPERF3" "build iperf3 3.21, or apt-get install iperf3"
[ "$(id -u)" = 0 ] || { echo "bench: routed.sh needs root (network namespaces)" >&2; exit 1; }

tag=wpr$$
A=$tag-a R=$tag-r B=$tag-b
cleanup() {
	kill "${BENCH_PIDS[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	for n in "$A" "$R" "$B"; do ip netns del "$n" 2>/dev/null || true; done
}
trap cleanup EXIT INT TERM

for n in "$A" "$R" "$B"; do ip netns add "$n"; done
ip link add "${tag}a" netns "$A" type veth peer name "${tag}ra" netns "$R"
ip link add "${tag}b" netns "$B" type veth peer name "${tag}rb" netns "$R"
ip -n "$A" addr add 10.213.1.2/24 dev "${tag}a"
ip -n "$R" addr add 10.213.1.1/24 dev "${tag}ra"
ip -n "$R" addr add 10.213.2.1/24 dev "${tag}rb"
ip -n "$B" addr add 10.213.2.2/24 dev "${tag}b"
for n in "$A" "$R" "$B"; do ip -n "$n" link set lo up; done
ip -n "$A" link set "${tag}a" up
ip -n "$B" link set "${tag}b" up
ip -n "$R" link set "${tag}ra" up
ip -n "$R" link set "${tag}rb" up
ip -n "$A" route add default via 10.213.1.1
ip -n "$B" route add default via 10.213.2.1
ip netns exec "$R" sysctl -qw net.ipv4.ip_forward=1

P_IPERF=15231
P_WP=15232
serve ip netns exec "$B" "$IPERF3" -s -p $P_IPERF
serve ip netns exec "$B" "$WP" -s -B 10.213.2.2 -p $P_WP --log-level error
for _ in $(seq 50); do
	[ -n "$(ip netns exec "$B" ss -Hlnt "sport = :$P_IPERF")" ] && [ -n "$(ip netns exec "$B" ss -Hlnt "sport = :$P_WP")" ] && break
	sleep 0.1
done

want=$(awk -v r="$RATE" 'BEGIN{u=substr(r,length(r)); v=substr(r,1,length(r)-1); m=(u=="k")?1e3:(u=="m")?1e6:(u=="g")?1e9:1; if (u ~ /[0-9]/) {v=r; m=1}; print v*m}')
load() { cut -d' ' -f1 /proc/loadavg; }

# row NAME: one line from a -J document on stdin.
row() {
	python3 -c '
import json, sys
name, want, load = sys.argv[1], float(sys.argv[2]), sys.argv[3]
e = json.load(sys.stdin)["end"]
s = e.get("sum_sent") or e["sum"]
r = e.get("sum_received") or e["sum"]
lost = e["sum"].get("lost_percent", r.get("lost_percent", 0))
c = e.get("cpu_utilization_percent", {})
print("  %-22s sent %7.1f Mbit/s (%5.1f%% of the rate)  received %7.1f  loss %6.3f%%  cpu sender %5.1f%%  receiver %5.1f%%  load %s" % (
    name, s["bits_per_second"] / 1e6, 100 * s["bits_per_second"] / want, r["bits_per_second"] / 1e6, lost or 0,
    c.get("host_total", 0), c.get("remote_total", 0), load))' "$1" "$want" "$(load)"
}

echo "== routed UDP, -u -l 1448 -b $RATE -t $SECS, $(date -u +%FT%TZ), $(nproc) CPUs, kernel forwarding, no shaping =="
ver=$("$IPERF3" --version | head -1 | cut -d' ' -f2)
ip netns exec "$A" "$IPERF3" -c 10.213.2.2 -p $P_IPERF -u -l 1448 -b "$RATE" -t "$SECS" -J | row "iperf3 $ver"
for extra in "" "--no-gso"; do
	out=$(ip netns exec "$A" "$WP" -c 10.213.2.2 -p $P_WP -u -l 1448 -b "$RATE" -t "$SECS" -J $extra)
	echo "$out" | row "wireperf ${extra:-(GSO)}"
	# The same settings once more in text, for the sentence that names
	# the limit when the rate was not held.
	ip netns exec "$A" "$WP" -c 10.213.2.2 -p $P_WP -u -l 1448 -b "$RATE" -t "$SECS" $extra |
		grep -E 'sender: .* requested|receiver: CPU-bound' | sed 's/^/    /' || echo "    (this run held 99% of the rate or more: no limit to name)"
done
