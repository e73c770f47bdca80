#!/usr/bin/env bash
# Side-by-side request-response latency on loopback: `wireperf rr` (UDP,
# back to back) against `sockperf ping-pong --full-rtt` with the same
# message size, interleaved (wireperf, sockperf, wireperf, sockperf...)
# so that both see the same load, several rounds at each size. Prints
# each round's p50 and p99 RTT and CPU per transaction (client + server,
# user + system, and each end's apart), and per size the median of the rounds' ratios
# wireperf ÷ sockperf (lower is better; the p50 target is ≤ 1.05).
#
# Both time each transaction in user space (wireperf's RTT is T4 − T1 on
# the monotonic clock) and block in recvmsg/recvfrom between
# transactions on a thread of their own. Servers are pinned to one core
# and clients to the other (taskset, as sockperf's documentation
# recommends) when the machine has two or more and taskset is there
# (PIN=0 turns it off). Traffic stays on 127.0.0.1.
#
#   bench/rr.sh [path/to/wireperf] [seconds per run] [rounds]
#   SIZES="64 1472" SOCKPERF=/usr/bin/sockperf BUSY=1 (also --busy-poll)
#   HOG=1: beside a CPU hog (two busy loops at nice 0, as bench/truth's
#   loaded half), which keeps both vCPUs from halting between
#   transactions: each wake-up is then the kernel's, not the hypervisor's.
set -euo pipefail
WP=${1:-./wireperf}
SECS=${2:-5}
ROUNDS=${3:-5}
SOCKPERF=${SOCKPERF:-sockperf}
SIZES=${SIZES:-64 1472}
P_SP=15301
P_WP=15302
. "$(dirname "$0")/lib.sh"
need "$SOCKPERF" "apt-get install sockperf"

SRV_PIN=() CLI_PIN=()
if [ "${PIN:-1}" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	SRV_PIN=(taskset -c 0) CLI_PIN=(taskset -c 1)
fi
serve_pinned() {
	"${SRV_PIN[@]}" "$@" >/dev/null 2>&1 &
	BENCH_PIDS+=($!)
}
serve_pinned "$SOCKPERF" server -i 127.0.0.1 -p $P_SP
SP_PID=${BENCH_PIDS[-1]}
serve_pinned "$WP" -s -B 127.0.0.1 -p $P_WP --log-level error
WP_PID=${BENCH_PIDS[-1]}
wait_port $P_SP
wait_port $P_WP
if [ "${HOG:-}" = 1 ]; then
	for _ in 1 2; do
		sh -c 'while :; do :; done' &
		BENCH_PIDS+=($!)
	done
fi

# cpu_ticks PID: the process's user + system CPU so far, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)

# timed SERVER_PID CMD...: runs CMD (the client), printing its output,
# then on fd 3 "client_cpu_s server_cpu_s".
timed() {
	local srv=$1 before after
	shift
	before=$(cpu_ticks "$srv")
	python3 -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
sys.stdout.buffer.write(r.stdout)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(u.ru_utime + u.ru_stime, file=sys.stderr)' "$@" 2>"$TMPCPU"
	after=$(cpu_ticks "$srv")
	echo "$(cat "$TMPCPU") $(awk -v a="$before" -v b="$after" -v hz="$HZ" 'BEGIN {print (b - a) / hz}')" >&3
}
TMPCPU=$(mktemp)
TMPOUT=$(mktemp)
trap 'kill "${BENCH_PIDS[@]}" 2>/dev/null; wait 2>/dev/null; rm -f "$TMPCPU" "$TMPOUT"' EXIT

# Each prints "p50 p99 transactions client_cpu_s server_cpu_s".
sockperf_run() {
	timed "$SP_PID" "${CLI_PIN[@]}" "$SOCKPERF" ping-pong -i 127.0.0.1 -p $P_SP -m "$1" -t "$SECS" --full-rtt 3>"$TMPOUT" |
		awk '/percentile 50.000/ {p50 = $NF} /percentile 99.000/ {p99 = $NF}
			/\[Total Run\]/ {for (i = 1; i <= NF; i++) if ($i ~ /^ReceivedMessages=/) {sub(/.*=/, "", $i); n = $i}}
			END {printf "%s %s %s ", p50, p99, n}'
	cat "$TMPOUT"
}
wireperf_run() {
	local size=$1
	shift
	timed "$WP_PID" "${CLI_PIN[@]}" "$WP" rr 127.0.0.1 -p $P_WP --sizes "$size" -t "$SECS" -J "$@" 3>"$TMPOUT" |
		python3 -c '
import json, sys
p = json.load(sys.stdin)["result"]["local"]["rr"]["points"][0]
print(p["rtt_us"]["p50"], p["rtt_us"]["p99"], p["completed"], end=" ")'
	cat "$TMPOUT"
}

# check SIZE ROUND WP_LINE SP_LINE: stop when a run gave no figures
# (a tool failed), rather than print a ratio of nothing.
check() {
	local ok='^[0-9.]+ [0-9.]+ [0-9]+ [0-9.]+ [0-9.e-]+$'
	[[ $3 =~ $ok ]] || { echo "bench: wireperf gave no figures at $1 bytes, round $2: '$3'" >&2; exit 1; }
	[[ $4 =~ $ok ]] || { echo "bench: sockperf gave no figures at $1 bytes, round $2: '$4'" >&2; exit 1; }
}

# per_tx LINE: CPU µs per transaction, client + server; per_side LINE:
# the client's and the server's apart ("12.3+13.4").
per_tx() { awk '{printf "%.1f", ($4 + $5) * 1e6 / $3}' <<<"$1"; }
per_side() { awk '{printf "%.1f+%.1f", $4 * 1e6 / $3, $5 * 1e6 / $3}' <<<"$1"; }

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); hog: ${HOG:-0}; pinning: ${SRV_PIN[*]:-none} (servers) ${CLI_PIN[*]:-none} (clients)"
for size in $SIZES; do
	r50=() r99=()
	printf '%5s %5s %11s %11s %11s %11s %9s %9s  %s\n' size round "sp p50 µs" "wp p50 µs" "sp p99 µs" "wp p99 µs" "sp CPU/tx" "wp CPU/tx" "client+server µs: sp, wp"
	for r in $(seq "$ROUNDS"); do
		w=$(wireperf_run "$size")
		s=$(sockperf_run "$size")
		read -r wp50 wp99 _ <<<"$w"
		read -r sp50 sp99 _ <<<"$s"
		check "$size" "$r" "$w" "$s"
		r50+=("$(awk -v a="$wp50" -v b="$sp50" 'BEGIN {print a / b}')")
		r99+=("$(awk -v a="$wp99" -v b="$sp99" 'BEGIN {print a / b}')")
		printf '%5s %5s %11.2f %11.2f %11.2f %11.2f %9s %9s  %s, %s\n' "$size" "$r" "$sp50" "$wp50" "$sp99" "$wp99" "$(per_tx "$s")µs" "$(per_tx "$w")µs" "$(per_side "$s")" "$(per_side "$w")"
	done
	m50=$(printf '%s\n' "${r50[@]}" | median)
	m99=$(printf '%s\n' "${r99[@]}" | median)
	printf '%d-byte UDP ping-pong, median of %d rounds'"'"' ratios wireperf ÷ sockperf: p50 %.2f (target ≤ 1.05), p99 %.2f\n' "$size" "$ROUNDS" "$m50" "$m99"
	if [ "${BUSY:-}" = 1 ]; then
		w=$(wireperf_run "$size" --busy-poll)
		read -r wp50 wp99 _ <<<"$w"
		printf 'wireperf --busy-poll: p50 %.2f µs, p99 %.2f µs, CPU %sµs/tx\n' "$wp50" "$wp99" "$(per_tx "$w")"
	fi
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
