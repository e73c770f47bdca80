#!/usr/bin/env bash
# Paced UDP on loopback, wireperf beside iperf3 at the same settings:
#  1. 1448-byte datagrams paced at 300 Mbit/s and 2 Gbit/s without GSO:
#     the rate held (received ÷ requested), the loss, and each side's CPU
#     (the sending client's and the receiving server's process CPU, as
#     both tools report it in -J, and per Gbit/s sent or received), with
#     the ratios wireperf ÷ iperf3;
#  2. GSO/GRO: the highest goodput received at < 0.5% loss, stepping the
#     rate up, against iperf3 --gsro.
# The load average is printed with every figure: on a shared machine the
# CPU seconds per side stay meaningful, the rates less so. Traffic stays
# on 127.0.0.1.
#
#   IPERF3=/path/to/iperf3 bench/udp_pace.sh [path/to/wireperf] [seconds per run]
#
# ROUNDS=N repeats the paced runs N times (0: none); GSO=0 leaves out the
# GSO/GRO part, GSO_ROUNDS=N repeats it, LADDER="10g 20g ..." sets its rates.
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

# sent_bps: the sending side's rate from a -J document (sum_sent where
# the tool gives it).
sent_bps() {
	python3 -c '
import json, sys
e = json.load(sys.stdin)["end"]
print((e.get("sum_sent") or e["sum"])["bits_per_second"])'
}

# run NAME RATE CMD...: one run; prints a row and sets BPS LOST CS CR,
# and KS KR: CPU per Gbit/s (the sender's % of a core per Gbit/s sent,
# the receiver's per Gbit/s received), the cost that compares tools
# whose rates differ.
run() {
	local name=$1 rate=$2; shift 2
	local l doc line
	l=$(load)
	doc=$("$@" -b "$rate") && line=$(udp_measure <<<"$doc") || { echo "  $name -b $rate: failed" >&2; BPS=0 LOST=100 CS=0 CR=0 KS=0 KR=0; return; }
	read -r BPS LOST CS CR <<<"$line"
	local want sent
	want=$(bps_of "$rate")
	sent=$(sent_bps <<<"$doc")
	KS=$(awk -v c="$CS" -v b="$sent" 'BEGIN{printf "%.1f", (b>0)?c/(b/1e9):0}')
	KR=$(awk -v c="$CR" -v b="$BPS" 'BEGIN{printf "%.1f", (b>0)?c/(b/1e9):0}')
	printf '  %-26s -b %-5s sent %8.3f received %8.3f Gbit/s (%5.1f%% of the rate)  loss %6.3f%%  cpu sender %5.1f%% receiver %5.1f%% (per Gbit/s %s / %s)  load %s\n' \
		"$name" "$rate" "$(awk -v b="$sent" 'BEGIN{print b/1e9}')" "$(awk -v b="$BPS" 'BEGIN{print b/1e9}')" \
		"$(awk -v b="$BPS" -v w="$want" 'BEGIN{print (w>0)?100*b/w:0}')" "$LOST" "$CS" "$CR" "$KS" "$KR" "$l"
}

echo "== paced, 1448-byte datagrams, no GSO, ${SECS} s per run ($(date -u +%FT%TZ), $(nproc) CPUs) =="
for _ in $(seq "${ROUNDS:-1}"); do
for rate in 300m 2g; do
	run "iperf3 $("$IPERF3" --version | head -1 | cut -d' ' -f2)" "$rate" "$IPERF3" -c 127.0.0.1 -p $P_IPERF -u -l 1448 -t "$SECS" -J
	iCS=$CS iCR=$CR iKS=$KS iKR=$KR
	run "wireperf --no-gso" "$rate" "$WP" -c 127.0.0.1 -p $P_WP -u -l 1448 -t "$SECS" -J --no-gso
	printf '  ratio wireperf/iperf3 at -b %s: cpu sender %s, receiver %s; per Gbit/s: sender %s, receiver %s\n' "$rate" \
		"$(awk -v a="$CS" -v b="$iCS" 'BEGIN{printf (b>0)?"%.2f":"n/a", a/b}')" \
		"$(awk -v a="$CR" -v b="$iCR" 'BEGIN{printf (b>0)?"%.2f":"n/a", a/b}')" \
		"$(awk -v a="$KS" -v b="$iKS" 'BEGIN{printf (b>0)?"%.2f":"n/a", a/b}')" \
		"$(awk -v a="$KR" -v b="$iKR" 'BEGIN{printf (b>0)?"%.2f":"n/a", a/b}')"
done
done
[ "${GSO:-1}" = 0 ] && exit 0

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

# The same rate ladder for both tools; GSO_ROUNDS rounds, each tool first
# in every other round. A round's ratio compares two ladders run back to
# back (the same moment's load); the median of those ratios is the figure,
# with its range: one ladder alone swings with whichever receiver first
# crosses 0.5% loss on a shared machine.
LADDER=${LADDER:-10g 20g 30g 40g 50g 60g 70g 80g}
echo "== GSO/GRO, highest goodput at < 0.5% loss, 3 s per run, -b over: $LADDER =="
ratios=()
for r in $(seq "${GSO_ROUNDS:-1}"); do
	for tool in $( ((r % 2)) && echo "iperf3 wireperf" || echo "wireperf iperf3"); do
		if [ "$tool" = iperf3 ]; then
			best "iperf3 --gsro" "$LADDER" "$IPERF3" -c 127.0.0.1 -p $P_IPERF -u -l 1448 -t 3 -J --gsro
			I=$BEST
		else
			best "wireperf (GSO/GRO)" "$LADDER" "$WP" -c 127.0.0.1 -p $P_WP -u -l 1448 -t 3 -J
			W=$BEST
		fi
	done
	ratio=$(awk -v a="$W" -v b="$I" 'BEGIN{printf (b>0)?"%.2f":"n/a", a/b}')
	printf '  round %d: ratio wireperf/iperf3 (GSO/GRO best): %s\n' "$r" "$ratio"
	[ "$ratio" != n/a ] && ratios+=("$ratio")
done
if [ "${#ratios[@]}" -gt 0 ]; then
	printf '  median of %d rounds: %s [%s-%s]\n' "${#ratios[@]}" "$(printf '%s\n' "${ratios[@]}" | median)" \
		"$(printf '%s\n' "${ratios[@]}" | sort -g | head -1)" "$(printf '%s\n' "${ratios[@]}" | sort -g | tail -1)"
fi
