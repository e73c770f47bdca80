#!/usr/bin/env bash
# Where a request-response transaction's CPU and context switches go, per
# thread: one `wireperf rr` run (UDP, back to back) and one `sockperf
# ping-pong --full-rtt` run on 127.0.0.1. Each end's threads are read
# from /proc/PID/task/*/status (voluntary and involuntary context
# switches) and /proc/PID/task/*/schedstat (time on a CPU) at two
# instants inside the run, half a second after its start and half a
# second before its end, so that start-up and the control exchange are
# left out; the transactions in that window are the run's rate (from its
# own report) times the window.
#
#   bench/rr-threads.sh [path/to/wireperf] [seconds per run]
#   SIZE=64 SOCKPERF=/usr/bin/sockperf
set -euo pipefail
WP=${1:-./wireperf}
SECS=${2:-4}
SIZE=${SIZE:-64}
SOCKPERF=${SOCKPERF:-sockperf}
P_SP=15303
P_WP=15304
. "$(dirname "$0")/lib.sh"
need "$SOCKPERF" "apt-get install sockperf"
[ "$SECS" -ge 2 ] || { echo "bench: runs of at least 2 s" >&2; exit 1; }

serve "$SOCKPERF" server -i 127.0.0.1 -p $P_SP
SP_PID=${BENCH_PIDS[-1]}
serve_wireperf $P_WP
WP_PID=${BENCH_PIDS[-1]}
wait_port $P_SP
wait_port $P_WP

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $SIZE-byte UDP ping-pong, $SECS s each, unpinned"
python3 - "$WP_PID" "$SP_PID" "$SECS" "$WP" rr 127.0.0.1 -p $P_WP --sizes "$SIZE" -t "$SECS" -J \
	-- "$SOCKPERF" ping-pong -i 127.0.0.1 -p $P_SP -m "$SIZE" -t "$SECS" --full-rtt <<'PY'
import json, os, re, subprocess, sys, time

wp_srv, sp_srv, secs = sys.argv[1], sys.argv[2], int(sys.argv[3])
rest = sys.argv[4:]
cut = rest.index("--")
wp_cmd, sp_cmd = rest[:cut], rest[cut + 1:]

def snap(pids):
    """{(end, tid): (comm, voluntary, involuntary, run_ns)} for every thread of pids."""
    out = {}
    for end, pid in pids.items():
        for tid in os.listdir(f"/proc/{pid}/task"):
            d = f"/proc/{pid}/task/{tid}"
            try:
                comm = open(d + "/comm").read().strip()
                st = dict(l.split(":", 1) for l in open(d + "/status") if ":" in l)
                run = int(open(d + "/schedstat").read().split()[0])
            except OSError:
                continue  # a thread that ended meanwhile
            out[(end, tid)] = (comm, int(st["voluntary_ctxt_switches"]), int(st["nonvoluntary_ctxt_switches"]), run)
    return out

def switches(pid):
    n = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            st = dict(l.split(":", 1) for l in open(f"/proc/{pid}/task/{tid}/status") if ":" in l)
        except OSError:
            continue
        n += int(st["voluntary_ctxt_switches"])
    return n

def flowing(srv, cli, secs):
    """Returns once the server switches over 200 times in 50 ms (the
    transactions have started), or exits after 10 s without."""
    last = switches(srv)
    for _ in range(200):
        time.sleep(0.05)  # bench pacing: a poll of the counters
        if cli.poll() is not None:
            sys.exit(f"bench: the client ended before its transactions started: {cli.stdout.read()[-500:]!r}")
        now = switches(srv)
        if now - last > 200:
            return
        last = now
    cli.kill()
    sys.exit("bench: no transactions within 10 s")

def wp_rate(text):
    p = json.loads(text)["result"]["local"]["rr"]["points"][0]
    return p["transactions_per_second"]

def sp_rate(text):
    m = re.search(r"\[Total Run\] RunTime=([0-9.]+) sec; .*?ReceivedMessages=([0-9]+)", text)
    return int(m.group(2)) / float(m.group(1))

def measure(name, srv, cmd, rate_of):
    cli = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    # The window opens once the transactions flow, not at a fixed time
    # after the start: sockperf idles about 2 s before its warm-up when
    # its output is a pipe, and a window from 0.5 s read that idle time.
    flowing(srv, cli, secs)
    time.sleep(0.3)  # bench pacing: past the first transactions
    t0, before = time.monotonic(), snap({"server": srv, "client": cli.pid})
    time.sleep(secs - 1)  # bench pacing: the window closes before the end
    t1, after = time.monotonic(), snap({"server": srv, "client": cli.pid})
    out = cli.communicate()[0].decode(errors="replace")
    if cli.returncode != 0:
        sys.exit(f"bench: {name} failed: {out[-500:]}")
    rate = rate_of(out)
    tx = rate * (t1 - t0)
    print(f"{name}: {rate:.0f} transactions/s, {tx:.0f} in the {t1 - t0:.1f} s window")
    print(f"  {'end':6} {'thread':24} {'switches/tx vol':>16} {'invol':>8} {'CPU µs/tx':>10}")
    tot = {"server": [0, 0, 0], "client": [0, 0, 0]}
    for key in sorted(after):
        comm, vol, invol, run = after[key]
        b = before.get(key, (comm, 0, 0, 0))
        dv, di, dr = vol - b[1], invol - b[2], run - b[3]
        if dv == di == dr == 0:
            continue
        t = tot[key[0]]
        t[0] += dv; t[1] += di; t[2] += dr
        print(f"  {key[0]:6} {comm + '/' + key[1]:24} {dv / tx:16.3f} {di / tx:8.3f} {dr / tx / 1e3:10.2f}")
    for end, (dv, di, dr) in tot.items():
        print(f"  {end:6} {'all threads':24} {dv / tx:16.3f} {di / tx:8.3f} {dr / tx / 1e3:10.2f}")

measure("wireperf rr", wp_srv, wp_cmd, wp_rate)
measure("sockperf ping-pong --full-rtt", sp_srv, sp_cmd, sp_rate)
PY
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
