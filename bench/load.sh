#!/usr/bin/env bash
# Load: 100 wireperf clients start at once against one server, from 50
# loopback addresses (127.0.0.2 to 127.0.0.51), so that the server-wide
# limits are met as well as the per-client ones. Each must
# be served, or refused with a reason, within 2 s of its start (a served
# client's test then runs its length). The times include starting each
# client process, which a loaded machine slows down. Prints how many were served and
# refused, and the slowest answer of each kind.
#
# Traffic stays on 127.0.0.1.
#
#   bench/load.sh [path/to/wireperf] [clients (100)] [test seconds (1)]
set -euo pipefail
WP=${1:-./wireperf}
N=${2:-100}
T=${3:-1}
PORT=15312
. "$(dirname "$0")/lib.sh"
trap 'kill "${BENCH_PIDS[@]}" 2>/dev/null || true; wait 2>/dev/null || true' EXIT
serve_wireperf $PORT
wait_port $PORT

python3 - "$WP" "$PORT" "$N" "$T" <<'PY'
import subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
wp, port, n, t = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])

def one(i):
    start = time.monotonic()
    src = f"127.0.0.{2 + i % 50}"
    p = subprocess.run([wp, "-c", "127.0.0.1", "-p", port, "-B", src, "-t", str(t), "-i", "0"],
                       capture_output=True, text=True, timeout=60)
    took = time.monotonic() - start
    return p.returncode, took, p.stderr.strip().splitlines()[-1:] if p.stderr else []

with ThreadPoolExecutor(max_workers=n) as ex:
    outcomes = list(ex.map(one, range(n)))
served = [o for o in outcomes if o[0] == 0]
refused = [o for o in outcomes if o[0] != 0 and o[2] and "refused" in o[2][0]]
other = [o for o in outcomes if o not in served and o not in refused]
late = [o for o in served if o[1] > t + 2] + [o for o in refused if o[1] > 2]
print(f"clients {n}: served {len(served)}, refused with a reason {len(refused)}, other {len(other)}")
def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]
if served:
    xs = [o[1] for o in served]
    print(f"served: median {pct(xs, .5):.2f} s, p95 {pct(xs, .95):.2f} s, slowest {max(xs):.2f} s for a {t:g} s test")
if refused:
    xs = [o[1] for o in refused]
    print(f"refused: median {pct(xs, .5):.2f} s, p95 {pct(xs, .95):.2f} s, slowest {max(xs):.2f} s; reason e.g. {refused[0][2][0]}")
for o in other[:5]:
    print("other:", o)
if other or late:
    sys.exit(f"load: {len(other)} clients neither served nor refused, {len(late)} answered late")
PY
