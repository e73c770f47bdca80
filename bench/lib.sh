# Shared by the bench scripts: checks, the two servers, cleanup, median.
# Source it after setting WP (the wireperf binary). Traffic stays on
# 127.0.0.1.

# need CMD HINT: stop with a one-line message when CMD is missing.
need() {
	command -v "$1" >/dev/null || { echo "bench: $1 not found ($2)" >&2; exit 1; }
}

need python3 "apt-get install python3"
[ -x "$WP" ] || { echo "bench: $WP is not executable (make build)" >&2; exit 1; }

BENCH_PIDS=()
trap 'kill "${BENCH_PIDS[@]}" 2>/dev/null; wait 2>/dev/null' EXIT

# serve CMD...: run a server in the background until the script exits.
serve() {
	"$@" >/dev/null 2>&1 &
	BENCH_PIDS+=($!)
}

# serve_wireperf PORT: a wireperf server on 127.0.0.1:PORT.
serve_wireperf() {
	serve "$WP" -s -B 127.0.0.1 -p "$1" --log-level error
}

# wait_port PORT: wait (at most 5 s) until a TCP or UDP socket is bound
# to PORT, without sending the server anything.
wait_port() {
	for _ in $(seq 50); do
		[ -n "$(ss -Hlntu "sport = :$1")" ] && return 0
		sleep 0.1
	done
	echo "bench: nothing listens on 127.0.0.1:$1" >&2
	exit 1
}

# serve_pair ANCHOR_PORT WP_PORT ANCHOR_CMD...: the anchor's server and
# wireperf's, both listening before it returns.
serve_pair() {
	local ap=$1 wp=$2
	shift 2
	serve "$@"
	serve_wireperf "$wp"
	wait_port "$ap"
	wait_port "$wp"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# udp_measure: "receive-bps lost-percent cpu-sender cpu-receiver" from a
# UDP test's iperf3-layout -J document (iperf3's or wireperf's).
udp_measure() {
	python3 -c '
import json, sys
d = json.load(sys.stdin)
e = d["end"]
r = e.get("sum_received") or e["sum"]
s = e.get("sum") or r
lost = s.get("lost_percent", r.get("lost_percent", 0))
c = e.get("cpu_utilization_percent", {})
print(r["bits_per_second"], lost, c.get("host_total", 0), c.get("remote_total", 0))'
}
