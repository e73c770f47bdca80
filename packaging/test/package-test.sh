#!/usr/bin/env bash
# make package-test: the .deb where users run it. A Debian bookworm root
# (debootstrap, cached) boots systemd in a container (systemd-nspawn) on a
# network namespace this script makes, joined to the host by a veth pair on
# addresses it picks; then:
#   install the .deb (nothing enabled or started by it), start both units,
#   test the packaged server from the host (wireperf -c, and iperf3 -c when
#   the host has it), let the packaged daemon run a scheduled client task and
#   a trace task into its archive (PostgreSQL in the container), stop the
#   archive under a running task and see the spool hold the result and
#   deliver it when the archive is back, upgrade to a rebuilt package of
#   another version (config and archive kept, units restarted), purge (no
#   file, user or unit of ours left); then run the container image's own
#   root and default command (systemd-nspawn --oci-bundle, as the image's
#   user) on the same namespace and test it from the host.
# PACKAGE_TEST_ONLY=image runs the image's stage alone (no .deb, no
# debootstrap): make image && PACKAGE_TEST_ONLY=image bash packaging/test/package-test.sh
# Root only. Everything it makes (the container's copy of the root, the
# namespace, the rebuilt package) is removed when it ends, however it ends;
# the cached root stays in $PACKAGE_TEST_CACHE.
set -euo pipefail
cd "$(dirname "$0")/../.."

DIST=${DIST:-dist}
CACHE=${PACKAGE_TEST_CACHE:-/var/cache/wireperf-package-test}
INCLUDE=systemd,systemd-sysv,dbus,postgresql
BOOT_TIMEOUT=${BOOT_TIMEOUT:-120}
ONLY=${PACKAGE_TEST_ONLY:-}
GO=${GO:-go}

log() { printf '\n== %s\n' "$*"; }
fail() {
	printf '\npackage-test: FAILED: %s\n' "$*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || fail "needs root (debootstrap, systemd-nspawn, network namespaces)"
case $ONLY in "" | image) ;; *) fail "PACKAGE_TEST_ONLY=$ONLY: want image or nothing" ;; esac
arch=$(dpkg --print-architecture)
image=$(ls -t "$DIST"/wireperf_*_linux_"$arch".oci.tar 2>/dev/null | head -1)
[ -n "$image" ] || fail "no $DIST/wireperf_*_linux_$arch.oci.tar: run make image first"
if [ -z "$ONLY" ]; then
deb=$(ls -t "$DIST"/wireperf_*_"$arch".deb 2>/dev/null | head -1)
[ -n "$deb" ] || fail "no $DIST/wireperf_*_$arch.deb: run make deb first"
fi

need=()
[ -n "$ONLY" ] || command -v debootstrap >/dev/null || need+=(debootstrap)
command -v systemd-nspawn >/dev/null || need+=(systemd-container)
command -v ip >/dev/null || need+=(iproute2)
[ -n "$ONLY" ] || command -v lintian >/dev/null || need+=(lintian)
if ((${#need[@]})); then
	log "installing ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [ -z "$ONLY" ]; then
log "lintian $(basename "$deb") (warnings left are explained in packaging/README.md)"
lintian --fail-on error "$deb" || fail "lintian reports errors"
fi

# The Debian mirror apt uses on this machine (deb822 sources first).
mirror() {
	local m
	m=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
	[ -n "$m" ] || m=$(awk '$1 == "deb" && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true)
	[ -n "$m" ] || fail "no Debian mirror in apt's sources to build the root from"
	echo "$m"
}

# The cached root: built once (a few minutes), rebuilt when INCLUDE changes.
base="$CACHE/bookworm"
if [ -z "$ONLY" ] && [ "$(cat "$base/.wireperf-package-test" 2>/dev/null)" != "$INCLUDE" ]; then
	m=$(mirror)
	log "debootstrap bookworm from $m into $base (once; cached)"
	mkdir -p "$CACHE"
	rm -rf "$base" "$base.tmp"
	debootstrap --variant=minbase --include="$INCLUDE" bookworm "$base.tmp" "$m" >"$CACHE/debootstrap.log" 2>&1 ||
		{ tail -20 "$CACHE/debootstrap.log"; fail "debootstrap"; }
	echo "$INCLUDE" >"$base.tmp/.wireperf-package-test"
	mv "$base.tmp" "$base"
fi

work=$(mktemp -d /var/tmp/wireperf-package-test.XXXXXX)
ns=wppkg$$
veth_host=wppkgh$$
veth_cont=wppkgc$$
nspawn=
image_nspawn=
stop() { # the systemd-nspawn of PID $1, if it runs
	if [ -n "$1" ] && kill -0 "$1" 2>/dev/null; then
		kill -TERM "$1" 2>/dev/null || true
		for _ in $(seq 60); do kill -0 "$1" 2>/dev/null || break; sleep 0.5; done
		kill -KILL "$1" 2>/dev/null || true
		wait "$1" 2>/dev/null || true
	fi
}
cleanup() {
	local rc=$?
	stop "$image_nspawn"
	stop "$nspawn"
	ip link del "$veth_host" 2>/dev/null || true
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$work"
	if [ $rc = 0 ]; then echo "package-test: passed"; fi
	exit $rc
}
trap cleanup EXIT INT TERM

# A /30 of 10.254.0.0/16 that no interface here uses: the host's end .1, the
# container's .2. All the test's traffic goes to these two addresses.
net=
for _ in $(seq 50); do
	n=10.254.$((RANDOM % 254)).$(((RANDOM % 63) * 4))
	if ! ip -4 addr | grep -q "inet ${n%.*}\." && ! ip -4 route | grep -q "^${n%.*}\."; then net=$n; break; fi
done
[ -n "$net" ] || fail "no free /30 in 10.254.0.0/16"
host_ip=${net%.*}.$((${net##*.} + 1))
cont_ip=${net%.*}.$((${net##*.} + 2))
ip netns add "$ns"
ip link add "$veth_host" type veth peer name "$veth_cont" netns "$ns"
ip addr add "$host_ip/30" dev "$veth_host"
ip link set "$veth_host" up
ip -n "$ns" addr add "$cont_ip/30" dev "$veth_cont"
ip -n "$ns" link set "$veth_cont" up
ip -n "$ns" link set lo up

hostbin="$DIST/stage/linux_$arch/wireperf"
[ -x "$hostbin" ] || hostbin="$DIST/stage/static_$arch/wireperf"

# The image's own root and default command, as its user, on the namespace:
# `pkgbuild bundle` unpacks its layer and writes an OCI runtime config of
# its entrypoint, command, environment and numeric user (nspawn's --user
# would look the user up with getent, which the image has not).
image_stage() {
	log "the container image $(basename "$image"): its server (systemd-nspawn --oci-bundle) on namespace $ns, address $cont_ip"
	"$GO" run ./internal/pkgbuild/cmd/pkgbuild bundle "$image" "$work/bundle"
	grep -A3 '"user"' "$work/bundle/config.json" | tr -d ' \n'; echo
	grep -A3 '"args"' "$work/bundle/config.json" | tr -d ' \n'; echo
	systemd-nspawn -q --oci-bundle="$work/bundle" --register=no --keep-unit --kill-signal=SIGTERM \
		--network-namespace-path="/run/netns/$ns" --machine="${ns}img" >"$work/image.log" 2>&1 &
	image_nspawn=$!
	for _ in $(seq 40); do
		(exec 3<>"/dev/tcp/$cont_ip/5201") 2>/dev/null && break
		kill -0 "$image_nspawn" 2>/dev/null || { cat "$work/image.log"; fail "the image's server exited"; }
		sleep 0.5
	done
	local server
	server=$(pgrep -P "$image_nspawn" -x wireperf || true)
	[ -n "$server" ] || { cat "$work/image.log"; fail "no wireperf under the image's systemd-nspawn"; }
	ps -o pid=,uid=,gid=,args= -p "$server"
	[ "$(ps -o uid= -p "$server" | tr -d ' ')" = 65532 ] || fail "the image's server does not run as 65532"
	"$hostbin" -c "$cont_ip" -t 3 | grep -E 'Goodput|receiver'
	"$hostbin" -c "$cont_ip" -u -b 100m -t 2 | grep -E 'Goodput|lost|receiver'
	stop "$image_nspawn"
	image_nspawn=
	grep -m1 'server listening' "$work/image.log" || true
}
if [ -n "$ONLY" ]; then
	image_stage
	exit 0
fi

log "copying the cached root ($(du -sh "$base" | cut -f1)) for this run"
cp -a --reflink=auto "$base" "$work/root"
root="$work/root"
rm -f "$root/.wireperf-package-test" # the cache's stamp: the purge check looks for every *wireperf* file

log "booting the container (systemd-nspawn -b) on namespace $ns, address $cont_ip"
systemd-nspawn -q -D "$root" -b --console=pipe --register=no --keep-unit \
	--network-namespace-path="/run/netns/$ns" --machine="$ns" >"$work/console.log" 2>&1 &
nspawn=$!
leader=
for _ in $(seq 40); do
	leader=$(pgrep -P "$nspawn" | head -1 || true)
	[ -n "$leader" ] && break
	sleep 0.5
done
[ -n "$leader" ] || { cat "$work/console.log"; fail "systemd-nspawn started no init"; }
ct() { nsenter -t "$leader" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }
state=
for _ in $(seq $((BOOT_TIMEOUT * 2))); do
	state=$(ct systemctl is-system-running 2>/dev/null || true)
	case $state in running | degraded) break ;; esac
	sleep 0.5
done
echo "systemctl is-system-running: $state"
if [ "$state" != running ]; then
	ct systemctl --failed --no-pager || true
	fail "the container's systemd is $state"
fi

log "install $(basename "$deb")"
cp "$deb" "$root/root/"
ct dpkg -i "/root/$(basename "$deb")"
for u in wireperf-server wireperf; do
	echo "$u: $(ct systemctl is-enabled $u || true), $(ct systemctl is-active $u || true)"
	[ "$(ct systemctl is-active $u || true)" = inactive ] || fail "$u was started by the install"
done
ct getent passwd wireperf
ct wireperf version
# --man=no: the minbase root has no man-db to open the units' Documentation=
# pages; the pages themselves are checked to be there.
ct test -f /usr/share/man/man1/wireperf-daemon.1.gz
ct test -f /usr/share/man/man1/wireperf-server.1.gz
ct test -f /usr/share/wireperf/monitoring/wireperf.rules.yml
ct test -f /usr/share/wireperf/monitoring/wireperf-dashboard.json
ct systemd-analyze verify --man=no /usr/lib/systemd/system/wireperf.service /usr/lib/systemd/system/wireperf-server.service

log "start wireperf-server; a client test from the host to $cont_ip"
ct systemctl start wireperf-server
for _ in $(seq 40); do
	ct systemctl is-active -q wireperf-server && (exec 3<>"/dev/tcp/$cont_ip/5201") 2>/dev/null && break
	sleep 0.5
done
ct systemctl status --no-pager -n 3 wireperf-server || true
"$hostbin" -c "$cont_ip" -t 3
if command -v iperf3 >/dev/null; then
	iperf3 -c "$cont_ip" -t 2 | tail -4
fi

log "the daemon, with its archive in PostgreSQL in the container"
ct systemctl is-active postgresql
ct runuser -u postgres -- psql -q -c "CREATE ROLE wireperf LOGIN" >/dev/null
ct runuser -u postgres -- createdb -O wireperf wireperf
dsn="postgres://wireperf@/wireperf?host=/var/run/postgresql"
cat >"$root/etc/wireperf/daemon.yaml" <<EOF
host: pt
db: $dsn
listen: 127.0.0.1:5280
port: 0
plan_every: 2s
horizon: 2m
EOF
ct chgrp wireperf /etc/wireperf/daemon.yaml
ct chmod 640 /etc/wireperf/daemon.yaml
# A local change to a conffile, which the upgrade must keep.
echo '# a local line, kept by upgrades' >>"$root/etc/default/wireperf"
ct systemctl start wireperf
sleep 1
ct systemctl is-active wireperf || { ct journalctl -u wireperf --no-pager | tail -20; fail "the daemon did not start"; }
wp() { ct runuser -u wireperf -- env WIREPERF_DB="$dsn" wireperf "$@"; }
at() { date -u -d "@$(($(date +%s) + $1))" +%Y-%m-%dT%H:%M:%SZ; }
wp task add --name tput --source pt --dest pt --addr 127.0.0.1:5201 --test "client -t 2" --start "$(at 6)" --slip 1m
wp task add --name path --source pt --dest pt --addr 127.0.0.1 --class background --test "trace --max-hops 4 --probes 1" --start "$(at 6)" --slip 1m
finished() { wp runs 2>/dev/null | grep -c finished || true; }
for _ in $(seq 90); do
	[ "$(finished)" -ge 2 ] && break
	sleep 1
done
wp runs
[ "$(finished)" -ge 2 ] || { ct journalctl -u wireperf --no-pager | tail -30; fail "the daemon's client and trace runs are not both finished in its archive"; }

log "the archive goes away under a running task: the spool keeps its result"
started() { ct journalctl -u wireperf --no-pager | grep -c 'run started' || true; }
n_started=$(started)
n_finished=$(finished)
wp task add --name spooled --source pt --dest pt --addr 127.0.0.1:5201 --test "client -t 6" --start "$(at 6)" --slip 1m
for _ in $(seq 60); do
	[ "$(started)" -gt "$n_started" ] && break
	sleep 0.5
done
[ "$(started)" -gt "$n_started" ] || fail "the third task did not start"
ct systemctl stop postgresql
echo "postgresql: $(ct systemctl is-active postgresql || true)"
spool=
for _ in $(seq 40); do
	spool=$(ct find /var/lib/wireperf -path '*spool*' -name '*.json' 2>/dev/null || true)
	[ -n "$spool" ] && break
	sleep 0.5
done
[ -n "$spool" ] || { ct journalctl -u wireperf --no-pager | tail -30; fail "no result in the spool"; }
echo "spooled: $spool"
ct journalctl -u wireperf --no-pager | grep -m1 'archive is unreachable' || true
ct systemctl start postgresql
for _ in $(seq 60); do
	[ -z "$(ct find /var/lib/wireperf -path '*spool*' -name '*.json' 2>/dev/null || true)" ] && break
	sleep 1
done
ct journalctl -u wireperf --no-pager | grep -m1 'spooled run recorded' || fail "the spool did not deliver"
wp runs
[ "$(finished)" -gt "$n_finished" ] || fail "the spooled run is not in the archive"

log "upgrade to a rebuilt package of another version"
old_version=$(dpkg-deb -f "$deb" Version)
new_version="${old_version%-*}+pkgtest"
make --no-print-directory deb VERSION="$new_version" DIST="$work/upgrade" LINUX_ARCHES="$arch" >"$work/upgrade.log" 2>&1 ||
	{ tail -20 "$work/upgrade.log"; fail "rebuilding the package"; }
newdeb=$(ls "$work/upgrade"/wireperf_*_"$arch".deb)
cp "$newdeb" "$root/root/"
pids_before="$(ct systemctl show -p MainPID --value wireperf-server) $(ct systemctl show -p MainPID --value wireperf)"
runs_before=$(wp runs | grep -c finished)
ct env DEBIAN_FRONTEND=noninteractive dpkg -i --force-confdef --force-confold "/root/$(basename "$newdeb")"
ct wireperf version
ct dpkg-query -W wireperf
pids_after="$(ct systemctl show -p MainPID --value wireperf-server) $(ct systemctl show -p MainPID --value wireperf)"
echo "main PIDs (server, daemon): before $pids_before, after $pids_after"
[ "$pids_before" != "$pids_after" ] || fail "the upgrade restarted no unit"
ct systemctl is-active wireperf-server wireperf
grep -q 'kept by upgrades' "$root/etc/default/wireperf" || fail "the upgrade lost /etc/default/wireperf's change"
grep -q '^host: pt' "$root/etc/wireperf/daemon.yaml" || fail "the upgrade lost daemon.yaml"
runs_after=$(wp runs | grep -c finished)
echo "finished runs in the archive: before $runs_before, after $runs_after"
[ "$runs_after" -ge "$runs_before" ] || fail "runs lost in the upgrade"

log "purge"
ct systemctl enable wireperf-server
ct dpkg --purge wireperf
left=$(ct sh -c 'find / -xdev \( -path /proc -o -path /sys -o -path /root \) -prune -o -name "*wireperf*" -print' || true)
echo "files named *wireperf*: ${left:-none}"
[ -z "$left" ] || fail "purge left files"
if ct getent passwd wireperf; then fail "purge left the user"; fi
if ct getent group wireperf; then fail "purge left the group"; fi
units=$(ct systemctl list-unit-files --no-legend 'wireperf*' || true)
echo "unit files: ${units:-none}"
[ -z "$units" ] || fail "purge left units"

# After the purge nothing listens on the container's 5201: the image's server takes it.
image_stage
