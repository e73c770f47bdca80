#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for the archive's tests.
#   .ci/pg.sh start   installs PostgreSQL if needed, starts a cluster in a
#                     temporary directory on a free port, prints its DSN
#                     (for WIREPERF_TEST_PG_DSN) on stdout
#   .ci/pg.sh stop    stops the cluster and removes its directory
# The cluster runs as the postgres user (PostgreSQL refuses to run as
# root); its state is kept in $PG_STATE (default /tmp/wireperf-pg.state).
set -euo pipefail
state=${PG_STATE:-/tmp/wireperf-pg.state}

as_postgres() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

bindir() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	[ -n "$d" ] || return 1
	echo "$d"
}

# free_port picks a port in 20000-59999 that nothing on loopback listens on.
free_port() {
	local p i
	for i in $(seq 50); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	echo "no free port found" >&2
	return 1
}

start() {
	if ! bindir >/dev/null; then
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >&2
		apt-get install -y -qq postgresql >/dev/null
	fi
	local bin dir port
	bin=$(bindir)
	dir=$(mktemp -d /tmp/wireperf-pg.XXXXXX)
	chown postgres: "$dir" 2>/dev/null || true
	port=$(free_port)
	as_postgres "$bin/initdb" -D "$dir/data" -U wireperf --auth=trust -E UTF8 >/dev/null
	# max_connections: bench/mesh-scale's test runs 200 daemons of 2
	# connections each. pg_stat_statements: its report counts the
	# daemons' statements per run by their source.
	as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
		-o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=500 -c shared_preload_libraries=pg_stat_statements" start >/dev/null
	as_postgres "$bin/createdb" -h 127.0.0.1 -p "$port" -U wireperf wireperf_test
	printf 'dir=%s\nport=%s\n' "$dir" "$port" >"$state"
	echo "postgres://wireperf@127.0.0.1:$port/wireperf_test?sslmode=disable"
}

stop() {
	[ -f "$state" ] || return 0
	local dir
	dir=$(sed -n 's/^dir=//p' "$state")
	as_postgres "$(bindir)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
	rm -rf "$dir" "$state"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
