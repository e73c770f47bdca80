//go:build unix

// Package pgbouncer runs Debian's pgbouncer in transaction mode on a
// loopback port in front of a PostgreSQL, for the daemon's tests and
// bench/mesh-scale. Only tests and the bench harness import it.
package pgbouncer

import (
	"errors"
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
	"time"
)

// ErrNotInstalled: no pgbouncer binary on PATH or in /usr/sbin.
var ErrNotInstalled = errors.New("pgbouncer is not installed (Debian: apt-get install pgbouncer)")

// ErrRoot: the process is root and there is no postgres user to run
// pgbouncer as (it refuses to run as root).
var ErrRoot = errors.New("pgbouncer refuses root, and there is no postgres user to run it as")

// Options size the pooler.
type Options struct {
	// PoolSize is the server connections it opens to a database, at
	// most (default 1: every client's transactions take turns on one).
	PoolSize int
	// MaxClients is the client connections it accepts (default 100).
	MaxClients int
}

// Bouncer is a running pgbouncer.
type Bouncer struct {
	DSN  string // the PostgreSQL's DSN, with the pooler's address
	PID  int
	dir  string
	cmd  *exec.Cmd
	done chan error
}

// Start runs pgbouncer in transaction mode in front of dsn's server (a
// postgres:// URL), trusting every user of it, and waits until it
// listens.
func Start(dsn string, o Options) (*Bouncer, error) {
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		bin = "/usr/sbin/pgbouncer"
		if _, err := os.Stat(bin); err != nil {
			return nil, ErrNotInstalled
		}
	}
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("pgbouncer: want a postgres:// URL, not %q", dsn)
	}
	if o.PoolSize <= 0 {
		o.PoolSize = 1
	}
	if o.MaxClients <= 0 {
		o.MaxClients = 100
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		pg, err := user.Lookup("postgres")
		if err != nil {
			return nil, ErrRoot
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	dir, err := os.MkdirTemp("", "wireperf-pgbouncer-")
	if err != nil {
		return nil, err
	}
	os.Chmod(dir, 0o755)
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
admin_users = %s
auth_file = %s
pool_mode = transaction
default_pool_size = %d
max_db_connections = %d
max_client_conn = %d
logfile = %s
`, u.Hostname(), u.Port(), port, u.User.Username(), filepath.Join(dir, "users.txt"), o.PoolSize, o.PoolSize, o.MaxClients, filepath.Join(dir, "pgbouncer.log"))
	files := map[string]string{"pgbouncer.ini": ini, "users.txt": strconv.Quote(u.User.Username()) + ` ""` + "\n", "pgbouncer.log": ""}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o666); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		os.Chmod(p, 0o666)
	}
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := raiseFileLimit(o.MaxClients); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	b := &Bouncer{PID: cmd.Process.Pid, dir: dir, cmd: cmd, done: make(chan error, 1)}
	go func() { b.done <- cmd.Wait() }()
	// Bounded poll: until pgbouncer accepts connections, or exits.
	for deadline := time.Now().Add(15 * time.Second); ; {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		select {
		case err := <-b.done:
			log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgbouncer exited: %v: %s%s", err, out.String(), log)
		default:
		}
		if time.Now().After(deadline) {
			b.Stop()
			return nil, errors.New("pgbouncer did not listen within 15 s")
		}
		time.Sleep(50 * time.Millisecond) // bounded poll: see the deadline above
	}
	u.Host = fmt.Sprintf("127.0.0.1:%d", port)
	b.DSN = u.String()
	return b, nil
}

// Stop ends pgbouncer at once (SIGTERM; SIGINT would wait for its
// clients) and removes its files.
func (b *Bouncer) Stop() {
	b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(10 * time.Second):
		b.cmd.Process.Kill()
		<-b.done
	}
	os.RemoveAll(b.dir)
}

// raiseFileLimit lifts this process's soft limit on open files (which
// the child inherits) to what clients connections need, within the
// hard limit.
func raiseFileLimit(clients int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	want := uint64(clients) + 100
	if lim.Cur >= want {
		return nil
	}
	if want > lim.Max {
		return fmt.Errorf("pgbouncer: %d clients need %d open files, over this process's hard limit of %d", clients, want, lim.Max)
	}
	lim.Cur = want
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
}

// freePort is a loopback TCP port nothing listens on (closed again).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
