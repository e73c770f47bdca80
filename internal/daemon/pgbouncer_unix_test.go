//go:build unix

package daemon_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/schedule"
)

// freePort is a loopback TCP port nothing listens on (closed again).
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startPgBouncer runs pgbouncer in transaction mode on a loopback port in
// front of the test PostgreSQL, with one server connection per database
// (so every client's transactions take turns on it), and returns the
// daemon's DSN through it.
func startPgBouncer(t *testing.T, dsn string) string {
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		bin = "/usr/sbin/pgbouncer"
		if _, err := os.Stat(bin); err != nil {
			t.Skip("pgbouncer is not installed (Debian: apt-get install pgbouncer): the transaction-pooler test needs it")
		}
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	var asPostgres *syscall.SysProcAttr
	if os.Geteuid() == 0 {
		// pgbouncer refuses to run as root.
		pg, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("pgbouncer refuses root, and there is no postgres user to run it as")
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		asPostgres = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	dir, err := os.MkdirTemp("", "wireperf-pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	port := freePort(t)
	user := u.User.Username()
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = 1
max_client_conn = 50
logfile = %s
`, u.Hostname(), u.Port(), port, filepath.Join(dir, "users.txt"), filepath.Join(dir, "pgbouncer.log"))
	for name, text := range map[string]string{"pgbouncer.ini": ini, "users.txt": strconv.Quote(user) + ` ""` + "\n", "pgbouncer.log": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
		os.Chmod(filepath.Join(dir, name), 0o666)
	}
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	cmd.SysProcAttr = asPostgres
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM) // pgbouncer's immediate shutdown (SIGINT waits for its clients)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	// Bounded poll: until pgbouncer accepts connections, or exits.
	for deadline := time.Now().Add(15 * time.Second); ; {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			t.Fatalf("pgbouncer exited: %v\n%s\n%s", err, out.String(), log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("pgbouncer did not listen within 15 s")
		}
		time.Sleep(50 * time.Millisecond) // bounded poll: see the deadline above
	}
	u.Host = fmt.Sprintf("127.0.0.1:%d", port)
	return u.String()
}

// Two daemons work through PgBouncer in transaction mode, with one server
// connection that every client's transactions take turns on: the
// archive's and River's migrations, planning, reservations, River's
// polling and the results are stored, with no prepared statement or
// session lock left on a server connection for another client to trip on.
func TestDaemonsBehindPgBouncer(t *testing.T) {
	dsn, ok := archivetest.Backends(t)["postgres"]
	if !ok {
		t.Skip(archivetest.EnvPG + " not set: PgBouncer needs a PostgreSQL behind it")
	}
	bouncer := startPgBouncer(t, dsn)
	a := newDaemon(t, "a", bouncer, false, nil)
	b := newDaemon(t, "b", bouncer, true, nil)
	ctx := context.Background()
	const runs = 2
	probe := loopTask("probe", "b", "a", b.ServerPort(), 1, 4*time.Second, 3*time.Second, runs)
	probe.DestAddr = fmt.Sprintf("127.0.0.1:%d", b.ServerPort()) // b's own server: a has none
	probe.Class = schedule.Background
	for _, tk := range []*schedule.Task{loopTask("tput", "a", "b", b.ServerPort(), 1, 4*time.Second, 3*time.Second, runs), probe} {
		if _, err := a.Store().PutTask(ctx, tk, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	stopA, stopB := start(t, a), start(t, b)
	st, err := archive.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	all := waitDone(t, st, 2*runs, 90*time.Second)
	if err := stopA(); err != nil {
		t.Fatal(err)
	}
	if err := stopB(); err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if r.State != archive.StateFinished {
			t.Errorf("run %s %s→%s %s: %s", r.ID, r.Source, r.Dest, r.State, r.Reason)
		}
	}
	res, err := st.LastResults(ctx)
	if err != nil || len(res) != 2 {
		t.Fatalf("last results through the pooler: %d %v", len(res), err)
	}
}
