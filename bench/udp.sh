#!/usr/bin/env bash
# UDP on loopback: the highest receive rate each tool reaches with under
# 0.1% loss, 1448-byte payloads, stepping the offered rate up. Runs
# iperf3, wireperf without GSO and wireperf with GSO/GRO side by side.
# Traffic stays on 127.0.0.1.
#
#   bench/udp.sh [path/to/wireperf] [seconds per run]
set -euo pipefail
WP=${1:-./wireperf}
SECS=${2:-3}
IPERF3=${IPERF3:-iperf3}
P_IPERF=15211
P_WP=15212
. "$(dirname "$0")/lib.sh"
need "$IPERF3" "apt-get install iperf3"

serve_pair $P_IPERF $P_WP "$IPERF3" -s -p $P_IPERF

# best NAME CMD... : step through RATES, print the best rate under 0.1% loss.
best() {
	local name=$1; shift
	local bestbps=0 bestline=""
	for rate in $RATES; do
		line=$("$@" -b "$rate" | udp_measure) || continue
		read -r bps lost cs cr <<<"$line"
		printf '  %-22s -b %-6s receive %7.2f Gbit/s  loss %6.3f%%  cpu snd %5.1f%% rcv %5.1f%%\n' "$name" "$rate" "$(awk -v b="$bps" 'BEGIN{print b/1e9}')" "$lost" "$cs" "$cr" >&2
		if awk -v l="$lost" 'BEGIN{exit !(l < 0.1)}' && awk -v a="$bps" -v b="$bestbps" 'BEGIN{exit !(a > b)}'; then
			bestbps=$bps; bestline="$rate"
		fi
	done
	printf '%-24s %8.2f Gbit/s  (at -b %s)\n' "$name" "$(awk -v b="$bestbps" 'BEGIN{print b/1e9}')" "$bestline"
}

echo "highest receive rate with < 0.1% loss, ${SECS} s per run:"
RATES="250m 500m 750m 1g 1500m 2g" best "iperf3" "$IPERF3" -c 127.0.0.1 -p $P_IPERF -u -l 1448 -t "$SECS" -J
RATES="500m 1g 1500m 2g 3g 4g" best "wireperf --no-gso" "$WP" -c 127.0.0.1 -p $P_WP -u -l 1448 -t "$SECS" -J --no-gso
RATES="2g 4g 6g 8g 10g 12g 15g 20g" best "wireperf (GSO/GRO)" "$WP" -c 127.0.0.1 -p $P_WP -u -l 1448 -t "$SECS" -J
echo "paced -b 10g (wireperf, GSO):"
"$WP" -c 127.0.0.1 -p $P_WP -u -l 1448 -t "$SECS" -b 10g -J | udp_measure
