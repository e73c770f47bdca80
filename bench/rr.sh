#!/usr/bin/env bash
# Side-by-side request-response latency on loopback: `wireperf rr` (UDP,
# 64-byte requests and responses, back to back) against `sockperf
# ping-pong` with the same message size, run alternately, several rounds
# each. Prints each round's median RTT, the median of the rounds, and the
# ratio wireperf ÷ sockperf (lower is better; the target is ≤ 1.2).
#
# sockperf reports half the round trip unless asked for --full-rtt; it is
# asked. Both time each transaction in user space (wireperf's RTT is T4 −
# T1 on the monotonic clock) and block in recvfrom between transactions.
# Traffic stays on 127.0.0.1.
#
#   bench/rr.sh [path/to/wireperf] [seconds per run] [rounds]
set -euo pipefail
WP=${1:-./wireperf}
SECS=${2:-5}
ROUNDS=${3:-5}
SOCKPERF=${SOCKPERF:-sockperf}
SIZE=${SIZE:-64}
P_SP=15301
P_WP=15302
. "$(dirname "$0")/lib.sh"
need "$SOCKPERF" "apt-get install sockperf"

serve_pair $P_SP $P_WP "$SOCKPERF" server -i 127.0.0.1 -p $P_SP

# sockperf's median RTT in µs, from its "percentile 50.000 = X" line.
sockperf_p50() {
	"$SOCKPERF" ping-pong -i 127.0.0.1 -p $P_SP -m "$SIZE" -t "$SECS" --full-rtt 2>&1 |
		awk '/percentile 50.000/ {print $NF}'
}

# wireperf's median RTT in µs, from its JSON report.
wireperf_p50() {
	"$WP" rr 127.0.0.1 -p $P_WP --sizes "$SIZE" -t "$SECS" -J "$@" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["result"]["local"]["rr"]["points"][0]["rtt_us"]["p50"])'
}

sp=() wp=()
printf '%-6s %14s %14s\n' round "sockperf µs" "wireperf µs"
for r in $(seq "$ROUNDS"); do
	a=$(sockperf_p50)
	b=$(wireperf_p50)
	sp+=("$a") wp+=("$b")
	printf '%-6s %14.2f %14.2f\n' "$r" "$a" "$b"
done
ms=$(printf '%s\n' "${sp[@]}" | median)
mw=$(printf '%s\n' "${wp[@]}" | median)
awk -v a="$ms" -v b="$mw" -v n="$SIZE" 'BEGIN {
	printf "median RTT p50, %d-byte UDP ping-pong: sockperf %.2f µs, wireperf %.2f µs, ratio %.2f (target ≤ 1.2)\n", n, a, b, b/a }'
if [ "${BUSY:-}" = 1 ]; then
	b=$(wireperf_p50 --busy-poll)
	printf 'wireperf --busy-poll: %.2f µs\n' "$b"
fi
