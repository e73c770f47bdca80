#!/usr/bin/env bash
# Load: 100 native clients start at once against one wireperf server, from
# 50 loopback addresses (127.0.0.2 to 127.0.0.51), so that the server-wide
# limits are met as well as the per-client ones. Each must be served (its
# streams connected) or refused with a reason within 2 s of its turn, the
# moment it dials. The clients run in one process (bench/loadclient), so
# that starting 100 processes on a small machine is not what is measured.
#
# Traffic stays on 127.0.0.1.
#
#   bench/load.sh [path/to/wireperf] [clients (100)] [test length (1s)]
set -euo pipefail
WP=${1:-./wireperf}
N=${2:-100}
T=${3:-1s}
PORT=15312
. "$(dirname "$0")/lib.sh"
trap 'kill "${BENCH_PIDS[@]}" 2>/dev/null || true; wait 2>/dev/null || true' EXIT
need go "the Go toolchain builds bench/loadclient"
serve_wireperf $PORT
wait_port $PORT
(cd "$(dirname "$0")/.." && go run ./bench/loadclient -p $PORT -n "$N" -t "$T")
