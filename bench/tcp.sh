#!/usr/bin/env bash
# Side-by-side TCP throughput on loopback: wireperf against iperf3, run
# alternately, several rounds per mode. Prints the median goodput of each,
# the ratio, and each tool's median CPU (client + server, % of one core:
# on loopback the two vCPUs are the limit, so CPU per bit matters as much
# as bits). Traffic stays on 127.0.0.1.
#
#   bench/tcp.sh [path/to/wireperf] [seconds per run] [rounds]
#
# Each tool runs with its own defaults (wireperf writes 1 MiB blocks,
# iperf3 128 KiB); LEN=1M (or any -l value) gives both the same block.
# "per core" is wireperf's goodput per unit of CPU over iperf3's.
# "paired" is the median of each round's own ratio (the two tools ran
# back to back, so they shared that moment's load) with its range: on a
# shared machine it moves less than the ratio of the two medians. MODES
# (default "single,-P 2,-R,--bidir") picks the modes, comma-separated.
set -euo pipefail
WP=${1:-./wireperf}
SECS=${2:-5}
ROUNDS=${3:-3}
IPERF3=${IPERF3:-iperf3}
P_IPERF=15201
P_WP=15202
. "$(dirname "$0")/lib.sh"
need "$IPERF3" "apt-get install iperf3"

serve_pair $P_IPERF $P_WP "$IPERF3" -s -p $P_IPERF

# "goodput-bps cpu-percent" from an iperf3-layout JSON document: both
# directions added for --bidir, both ends' CPU added.
goodput() {
	python3 -c '
import json, sys
e = json.load(sys.stdin)["end"]
bps = e["sum_received"]["bits_per_second"]
if "sum_received_bidir_reverse" in e:
    bps += e["sum_received_bidir_reverse"]["bits_per_second"]
c = e["cpu_utilization_percent"]
print(bps, c["host_total"] + c["remote_total"])'
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-10s %14s %15s %7s %11s %13s %9s  %s\n' mode "iperf3 Gbit/s" "wireperf Gbit/s" ratio "iperf3 CPU" "wireperf CPU" "per core" "paired ratio [range]"
IFS=, read -r -a modes <<<"${MODES:-single,-P 2,-R,--bidir}"
for mode in "${modes[@]}"; do
	args=""
	[ "$mode" != single ] && args=$mode
	[ -n "${LEN:-}" ] && args="$args -l $LEN"
	ip=() wp=() ipc=() wpc=() pr=()
	for r in $(seq "$ROUNDS"); do
		# Each tool goes first in every other round.
		for tool in $( ((r % 2)) && echo "iperf3 wireperf" || echo "wireperf iperf3"); do
			if [ "$tool" = iperf3 ]; then
				read -r bps cpu < <("$IPERF3" -c 127.0.0.1 -p $P_IPERF -t "$SECS" $args -J | goodput)
				ip+=("$bps") ipc+=("$cpu")
			else
				read -r bps cpu < <("$WP" -c 127.0.0.1 -p $P_WP -t "$SECS" $args -J | goodput)
				wp+=("$bps") wpc+=("$cpu")
			fi
		done
		pr+=("$(awk -v a="${ip[-1]}" -v b="${wp[-1]}" 'BEGIN {print b/a}')")
	done
	mi=$(printf '%s\n' "${ip[@]}" | median)
	mw=$(printf '%s\n' "${wp[@]}" | median)
	ci=$(printf '%s\n' "${ipc[@]}" | median)
	cw=$(printf '%s\n' "${wpc[@]}" | median)
	mp=$(printf '%s\n' "${pr[@]}" | median)
	lo=$(printf '%s\n' "${pr[@]}" | sort -g | head -1)
	hi=$(printf '%s\n' "${pr[@]}" | sort -g | tail -1)
	awk -v m="$mode" -v a="$mi" -v b="$mw" -v ci="$ci" -v cw="$cw" -v mp="$mp" -v lo="$lo" -v hi="$hi" \
		'BEGIN {printf "%-10s %14.2f %15.2f %7.2f %10.0f%% %12.0f%% %9.2f  %.2f [%.2f-%.2f]\n", m, a/1e9, b/1e9, b/a, ci, cw, (b/cw)/(a/ci), mp, lo, hi}'
done
