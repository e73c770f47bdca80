#!/usr/bin/env bash
# Soak: a wireperf server under a steady mix of normal, failing and hostile
# clients for a set time. Every second it samples the server's RSS and
# open descriptors (/proc) beside the server's own status line (its live
# heap after the last collection, goroutines, tests accepted), and at the
# end bench/soakjudge fits a least-squares trend to each over all the
# samples after warm-up (10-s means) and fails the soak when even the low
# end of a slope's 99% interval is above its bound per accepted test:
# 8 KB of live heap, 0.05 descriptors or goroutines, 128 KB of RSS. It
# prints what the run could catch: "a leak of X KB per client, or Y MB
# per hour, is caught within the soak's length". A soakleak build
# (go build -tags soakleak) keeps 64 KiB per test, to show it does.
#
#   normal    wireperf clients with the key: TCP, reverse, UDP, 2 s each,
#             rate-capped
#   failing   a client with the wrong key; a client that asks for more
#             than the server's --max-test-memory
#   frozen    a reverse UDP client stopped with SIGSTOP part-way
#   hostile   bench/hostile.py: silent, oversized, flooding, junk,
#             foreign-token and idle connections
#
# Traffic stays on 127.0.0.1.
#
#   bench/soak.sh [path/to/wireperf] [seconds (120)] [warm-up seconds (30)]
#
# SOAK_PORT picks the port (15311), so soaks can run side by side;
# SOAKJUDGE a built bench/soakjudge (else go run); SOAK_KEEP a directory
# to keep the samples and the server's log in.
set -euo pipefail
WP=${1:-./wireperf}
SECS=${2:-120}
WARM=${3:-30}
PORT=${SOAK_PORT:-15311}
. "$(dirname "$0")/lib.sh"

DIR=$(mktemp -d)
trap 'kill "${BENCH_PIDS[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$DIR"' EXIT
printf 'soak 4c1f0b3e8a9d27f65e0c1a7b93d4f2e8\n' >"$DIR/key"
printf 'soak 9b2e7d4a1c6f08e35d7a2b9c4e1f6a03\n' >"$DIR/badkey"
chmod 600 "$DIR/key" "$DIR/badkey"

"$WP" -s -B 127.0.0.1 -p $PORT --auth-key-file "$DIR/key" --status-interval 1s \
	--log-format json --logfile "$DIR/server.log" --max-test-memory 64M &
SRV=$!
BENCH_PIDS+=($SRV)
wait_port $PORT
END=$((SECONDS + SECS))

client() { "$WP" -c 127.0.0.1 -p $PORT "$@" >/dev/null 2>&1 || true; }
loop() { while [ $SECONDS -lt $END ]; do "$@"; sleep 0.2; done; }

# The normal clients are rate-capped: the soak is about the server's
# resources over time, and uncapped loopback TCP would take both cores of
# a small machine from everything else on it (CI's other jobs included).
loop client --auth-key-file "$DIR/key" -t 2 -b 500m &
BENCH_PIDS+=($!)
loop client --auth-key-file "$DIR/key" -t 2 -R -P 4 -b 100m &
BENCH_PIDS+=($!)
loop client --auth-key-file "$DIR/key" -t 2 -u -b 50m &
BENCH_PIDS+=($!)
# Wrong keys come from an address of their own: the server slows a
# source whose keys are wrong, and the soak's other clients share
# 127.0.0.1.
loop client --auth-key-file "$DIR/badkey" -t 1 -B 127.0.0.2 &
BENCH_PIDS+=($!)
loop client --auth-key-file "$DIR/key" -t 1 -P 8 -l 16M &
BENCH_PIDS+=($!)
frozen() {
	"$WP" -c 127.0.0.1 -p $PORT --auth-key-file "$DIR/key" -t 2 -u -b 100m -R >/dev/null 2>&1 &
	FROZEN=$!
	sleep 1
	kill -STOP $FROZEN 2>/dev/null || true
	sleep 5
	kill -KILL $FROZEN 2>/dev/null || true
	wait $FROZEN 2>/dev/null || true
}
# Stopped at the end, the loop takes its stopped client with it (else
# the client outlives the soak, stopped).
(trap 'kill -KILL ${FROZEN:-} 2>/dev/null; exit 0' TERM; loop frozen) &
BENCH_PIDS+=($!)
python3 "$(dirname "$0")/hostile.py" $PORT "$SECS" &
BENCH_PIDS+=($!)

# Each second: the server's RSS and descriptors from /proc. Its live
# heap, goroutines and test counts come from its status line, which it
# logs every second. bench/soakjudge fits a trend to each over all the
# samples after the warm-up and judges it.
: >"$DIR/proc"
T0=$SECONDS
while [ $((SECONDS - T0)) -lt "$SECS" ]; do
	echo "$(date +%s.%N) $(awk '/^VmRSS/ {print $2}' /proc/$SRV/status) $(ls /proc/$SRV/fd | wc -l)" >>"$DIR/proc"
	sleep 1
done
kill -TERM $SRV
wait $SRV || { echo "soak: the server exited with an error" >&2; exit 1; }
[ -n "${SOAK_KEEP:-}" ] && cp "$DIR/proc" "$DIR/server.log" "$SOAK_KEEP"/

if [ -n "${SOAKJUDGE:-}" ]; then
	"$SOAKJUDGE" -proc "$DIR/proc" -log "$DIR/server.log" -warm "$WARM"
else
	(cd "$(dirname "$0")/.." && go run ./bench/soakjudge -proc "$DIR/proc" -log "$DIR/server.log" -warm "$WARM")
fi
