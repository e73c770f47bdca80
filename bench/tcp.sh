#!/usr/bin/env bash
# Side-by-side TCP throughput on loopback: wireperf against iperf3, run
# alternately, several rounds per mode. Prints the median goodput of each
# and the ratio. Traffic stays on 127.0.0.1.
#
#   bench/tcp.sh [path/to/wireperf] [seconds per run] [rounds]
set -euo pipefail
WP=${1:-./wireperf}
SECS=${2:-5}
ROUNDS=${3:-3}
IPERF3=${IPERF3:-iperf3}
P_IPERF=15201
P_WP=15202

command -v "$IPERF3" >/dev/null || { echo "bench: iperf3 not found (apt-get install iperf3)" >&2; exit 1; }
[ -x "$WP" ] || { echo "bench: $WP is not executable (make build)" >&2; exit 1; }

"$IPERF3" -s -p $P_IPERF >/dev/null 2>&1 &
IPID=$!
"$WP" -s -B 127.0.0.1 -p $P_WP --log-level error >/dev/null 2>&1 &
WPID=$!
trap 'kill $IPID $WPID 2>/dev/null; wait 2>/dev/null' EXIT
sleep 0.5

# goodput in bit/s from an iperf3-layout JSON document: both directions
# added for --bidir.
goodput() {
	python3 -c '
import json, sys
e = json.load(sys.stdin)["end"]
bps = e["sum_received"]["bits_per_second"]
if "sum_received_bidir_reverse" in e:
    bps += e["sum_received_bidir_reverse"]["bits_per_second"]
print(bps)'
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

printf '%-10s %14s %14s %7s\n' mode "iperf3 Gbit/s" "wireperf Gbit/s" ratio
for mode in single "-P 2" "-R" "--bidir"; do
	args=""
	[ "$mode" != single ] && args=$mode
	ip=() wp=()
	for _ in $(seq "$ROUNDS"); do
		ip+=("$("$IPERF3" -c 127.0.0.1 -p $P_IPERF -t "$SECS" $args -J | goodput)")
		wp+=("$("$WP" -c 127.0.0.1 -p $P_WP -t "$SECS" $args -J | goodput)")
	done
	mi=$(printf '%s\n' "${ip[@]}" | median)
	mw=$(printf '%s\n' "${wp[@]}" | median)
	awk -v m="$mode" -v a="$mi" -v b="$mw" 'BEGIN {printf "%-10s %14.2f %14.2f %7.2f\n", m, a/1e9, b/1e9, b/a}'
done
