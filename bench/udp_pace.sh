#!/usr/bin/env bash
# Paced UDP on loopback, wireperf beside iperf3 at the same settings:
#  1. 1448-byte datagrams paced at 300 Mbit/s and 2 Gbit/s without GSO:
#     the rate held (received ÷ requested), the loss, and each side's CPU
#     (the sending client's and the receiving server's process CPU, as
#     both tools report it in -J), with the ratios wireperf ÷ iperf3;
#  2. GSO/GRO: the highest goodput received at < 0.5% loss, stepping the
#     rate up, against iperf3 --gsro.
# The load average is printed with every figure: on a shared machine the
# CPU seconds per side stay meaningful, the rates less so. Traffic stays
# on 127.0.0.1.
#
#   IPERF3=/path/to/iperf3 bench/udp_pace.sh [path/to/wireperf] [seconds per run]
set -euo pipefail
WP=${1:-./wireperf}
SECS=${2:-5}
IPERF3=${IPERF3:-iperf3}
P_IPERF=15221
P_WP=15222
. "$(dirname "$0")/lib.sh"
need "$IPERF3" "build iperf3 3.21, or apt-get install iperf3"

serve_pair $P_IPERF $P_WP "$IPERF3" -s -p $P_IPERF

load() { cut -d' ' -f1 /proc/loadavg; }

bps_of() { # 300m, 2g, 10g → bits/s
	awk -v r="$1" 'BEGIN{u=substr(r,length(r)); v=substr(r,1,length(r)-1); m=(u=="k")?1e3:(u=="m")?1e6:(u=="g")?1e9:1; if (u ~ /[0-9]/) {v=r; m=1}; print v*m}'
}

# run NAME RATE CMD...: one run; prints a row and sets BPS LOST CS CR.
run() {
	local name=$1 rate=$2; shift 2
	local l line
	l=$(load)
	line=$("$@" -b "$rate" | udp_measure) || { echo "  $name -b $rate: failed" >&2; BPS=0 LOST=100 CS=0 CR=0; return; }
	read -r BPS LOST CS CR <<<"$line"
	local want
	want=$(bps_of "$rate")
	printf '  %-26s -b %-5s received %8.3f Gbit/s (%5.1f%% of the rate)  loss %6.3f%%  cpu sender %5.1f%% receiver %5.1f%%  load %s\n' \
		"$name" "$rate" "$(awk -v b="$BPS" 'BEGIN{print b/1e9}')" "$(awk -v b="$BPS" -v w="$want" 'BEGIN{print (w>0)?100*b/w:0}')" \
		"$LOST" "$CS" "$CR" "$l"
}

echo "== paced, 1448-byte datagrams, no GSO, ${SECS} s per run ($(date -u +%FT%TZ), $(nproc) CPUs) =="
for rate in 300m 2g; do
	run "iperf3 $("$IPERF3" --version | head -1 | cut -d' ' -f2)" "$rate" "$IPERF3" -c 127.0.0.1 -p $P_IPERF -u -l 1448 -t "$SECS" -J
	iCS=$CS iCR=$CR
	run "wireperf --no-gso" "$rate" "$WP" -c 127.0.0.1 -p $P_WP -u -l 1448 -t "$SECS" -J --no-gso
	printf '  ratio wireperf/iperf3 at -b %s: cpu sender %s, receiver %s\n' "$rate" \
		"$(awk -v a="$CS" -v b="$iCS" 'BEGIN{printf (b>0)?"%.2f":"n/a", a/b}')" \
		"$(awk -v a="$CR" -v b="$iCR" 'BEGIN{printf (b>0)?"%.2f":"n/a", a/b}')"
done

# best NAME RATES CMD...: the highest goodput under 0.5% loss over RATES.
best() {
	local name=$1 rates=$2; shift 2
	local top=0 at=""
	for rate in $rates; do
		run "$name" "$rate" "$@"
		if awk -v l="$LOST" -v a="$BPS" -v b="$top" 'BEGIN{exit !(l < 0.5 && a > b)}'; then
			top=$BPS at=$rate
		fi
	done
	BEST=$top
	printf '  best %-21s %8.2f Gbit/s at < 0.5%% loss (-b %s)\n' "$name" "$(awk -v b="$top" 'BEGIN{print b/1e9}')" "$at"
}

echo "== GSO/GRO, highest goodput at < 0.5% loss, 3 s per run =="
best "iperf3 --gsro" "10g 20g 40g 60g 80g" "$IPERF3" -c 127.0.0.1 -p $P_IPERF -u -l 1448 -t 3 -J --gsro
I=$BEST
best "wireperf (GSO/GRO)" "10g 20g 30g 40g 60g" "$WP" -c 127.0.0.1 -p $P_WP -u -l 1448 -t 3 -J
printf '  ratio wireperf/iperf3 (GSO/GRO best): %s\n' "$(awk -v a="$BEST" -v b="$I" 'BEGIN{printf (b>0)?"%.2f":"n/a", a/b}')"
