#!/usr/bin/env bash
# Soak: a wireperf server under a steady mix of normal, failing and hostile
# clients for a set time. Every 10 s it samples the server's RSS, open
# descriptors and goroutines (from the server's own status log line), and
# at the end checks that each stayed flat: the mean of the last third of
# the samples after warm-up is within 10% of the mean of the first third
# (fds and goroutines: or within 8, as the tests in flight move them).
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
	local p=$!
	sleep 1
	kill -STOP $p 2>/dev/null || true
	sleep 5
	kill -KILL $p 2>/dev/null || true
	wait $p 2>/dev/null || true
}
loop frozen &
BENCH_PIDS+=($!)
python3 "$(dirname "$0")/hostile.py" $PORT "$SECS" &
BENCH_PIDS+=($!)

# Each 10-s sample is the mean of readings taken every second in its
# window: tests come and go, and a single reading would mostly measure
# how many ran at that instant.
echo "t_s rss_kib fds goroutines"
: >"$DIR/samples"
T0=$SECONDS
for ((t = 10; t <= SECS; t += 10)); do
	: >"$DIR/window"
	for _ in $(seq 10); do
		echo "$(awk '/^VmRSS/ {print $2}' /proc/$SRV/status) $(ls /proc/$SRV/fd | wc -l)" >>"$DIR/window"
		sleep 1
		[ $((SECONDS - T0)) -ge $t ] && break
	done
	gr=$(grep '"server status"' "$DIR/server.log" | tail -10 |
		python3 -c 'import json,sys; g=[json.loads(l)["goroutines"] for l in sys.stdin]; print(round(sum(g)/len(g)) if g else 0)')
	echo "$t $(awk '{r+=$1; f+=$2} END {printf "%d %.0f", r/NR, f/NR}' "$DIR/window") $gr" | tee -a "$DIR/samples"
done
kill -TERM $SRV
wait $SRV || { echo "soak: the server exited with an error" >&2; exit 1; }

python3 - "$DIR/samples" "$WARM" "$DIR/server.log" <<'PY'
import json, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
warm = float(sys.argv[2])
rows = [r for r in rows if r[0] > warm]
if len(rows) < 3:
    sys.exit("soak: too few samples after warm-up; run longer")
third = max(1, len(rows) // 3)
ok = True
# fds and goroutines are small counts (about 20) that the tests in flight
# at a sample move: one -P test adds 6 goroutines, and a single such
# sample in a third of three moved its mean by 3.4 (CI). They may grow by
# 8. A leak of one per test would add about 40 between the thirds (some
# 80 tests are accepted in 120 s, the thirds' middles 60 s apart), five
# times that.
for i, name, slack in [(1, "rss", 0), (2, "fds", 8), (3, "goroutines", 8)]:
    first = sum(r[i] for r in rows[:third]) / third
    last = sum(r[i] for r in rows[-third:]) / third
    growth = (last - first) / first if first else 0
    flat = growth <= 0.10 or last - first <= slack
    ok &= flat
    print(f"{name}: first third {first:.0f}, last third {last:.0f}, growth {growth:+.1%} {'flat' if flat else 'GROWING'}")
status = [json.loads(l) for l in open(sys.argv[3]) if '"server status"' in l]
if status:
    s = status[-1]
    print(f"server counters: accepted {s['accepted']}, refused {s['refused']}, shed {s['shed']}, auth failed {s['auth_failed']}")
sys.exit(0 if ok else 1)
PY
