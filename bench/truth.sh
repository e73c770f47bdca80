#!/usr/bin/env bash
# The truth matrix (docs/truth.md): wireperf over the lab's paths (RTT 0.2,
# 19 and 215 ms; 100m, 622m and 1g), TCP -P 1 with and without -O, -P 4,
# -R, --bidir, UDP at 90% of the rate and rr --load, quiet and then beside
# a CPU hog (two busy loops, nice 0). Every receiver row is held to the
# path's capacity, the rows to the totals, the receiver total to the
# framing arithmetic after -O, UDP loss to the router's drops. Then the
# other commands (rr, rr --load, udpmon, advise, sweep, group, a daemon's
# task, ping, tcp-connect) on 1 ms/1g,
# 19 ms/622m and 215 ms/1g: latencies to the path's floor and bound,
# udpmon's attribution to the router's and socket's counts, advise's
# verdict to its figures, stored, daemon and group results to the capacity,
# ping's and tcp-connect's counts to the router's and host b's kernel. It
# prints Markdown tables; a failed check is named on stderr, and the exit
# status says whether any failed. Needs root.
#
#   WIREPERF=./wireperf bench/truth.sh                     the whole matrix, ~50 min
#   WIREPERF=./wireperf bench/truth.sh -short              19 ms / 622m, quiet, the client's cells
#   WIREPERF=./wireperf bench/truth.sh -hog-only           the loaded half
#   WIREPERF=./wireperf bench/truth.sh -matrix commands    the other commands' cells, ~25 min
#   WIREPERF=./wireperf bench/truth.sh -matrix commands -cells udpmon,group -paths 1ms/1g
set -euo pipefail
WP=${WIREPERF:-./wireperf}
[ "$(id -u)" = 0 ] || { echo "bench/truth.sh: needs root (network namespaces, TUN devices)" >&2; exit 1; }
[ -x "$WP" ] || { echo "bench/truth.sh: $WP is not executable (set WIREPERF)" >&2; exit 1; }
WP=$(cd "$(dirname "$WP")" && pwd)/$(basename "$WP")
cd "$(dirname "$0")/.."
echo "# $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $("$WP" --version 2>/dev/null | head -1)"
exec go run ./bench/truth -wireperf "$WP" "$@"
