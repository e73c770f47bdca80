// Package archive is the results archive: test runs, campaigns, the paths
// traces found and imported logs, in a database: an embedded SQLite file
// by default, or a PostgreSQL server that a team shares. One schema and
// one code path serve both; the schema is created and upgraded by
// versioned migrations that only ever add.
//
// The schedule's state (package taskstore: tasks, planned runs,
// reservations) is another store in the same database: its tables are
// created by these migrations, in the order every archive has recorded,
// and it takes its connections from the archive's pool (Store.DB).
package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers "sqlite"
)

// EnvDSN names the environment variable that picks the archive when
// --db is not given.
const EnvDSN = "WIREPERF_DB"

// busyTimeout is how long an SQLite writer waits for another's lock.
const busyTimeout = 10 * time.Second

// openTimeout bounds the first contact with a database server, so that
// an unreachable one fails at once rather than when a test has run.
const openTimeout = 10 * time.Second

type dialect int

const (
	sqliteDialect dialect = iota
	postgresDialect
)

// Store is an open archive.
type Store struct {
	db      *sql.DB
	dialect dialect
	dsn     string // as the user gave it, password removed

	// runMonths are the months whose run partition this Store has seen
	// exist (PostgreSQL), as "2006_01".
	runMonths sync.Map
}

// DefaultPath is where the archive lives when no DSN is given:
// $XDG_DATA_HOME/wireperf/wireperf.db, or ~/.local/share/wireperf/wireperf.db.
func DefaultPath() (string, error) {
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no archive location: set --db, %s or XDG_DATA_HOME (%v)", EnvDSN, err)
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "wireperf", "wireperf.db"), nil
}

// ResolveDSN picks the archive: the flag's DSN, else $WIREPERF_DB, else
// the default path.
func ResolveDSN(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if v := os.Getenv(EnvDSN); v != "" {
		return v, nil
	}
	return DefaultPath()
}

// Open opens the archive named by dsn (see ResolveDSN), creating it and
// bringing its schema up to date. A database that a newer wireperf has
// written is refused.
func Open(ctx context.Context, dsn string) (*Store, error) {
	return openStore(ctx, dsn, true)
}

// OpenExisting opens an archive that must exist already, for commands that
// only read: an SQLite file that is missing (or whose directory is), or
// that holds no archive, is refused with ErrNoArchive, and nothing is
// created. An older schema is brought up to date and a newer one refused,
// as by Open. A PostgreSQL DSN opens as by Open: connecting never creates a
// database.
func OpenExisting(ctx context.Context, dsn string) (*Store, error) {
	return openStore(ctx, dsn, false)
}

// PingAfterIdle is how long a PostgreSQL connection stays idle before
// its next use first checks it with a ping. pgx pings one idle for a
// second, which at a daemon's pace was a ping, and a transaction, before
// most of its statements: about half the transactions of each run
// (docs/scale.md). A connection closed by the server or a pooler while
// idle fails its next statement instead, which the daemon records (or
// spools) as it does any unreachable archive; poolers close idle
// connections after minutes.
const PingAfterIdle = time.Minute

// openPostgres opens a pool that pings a connection only after
// PingAfterIdle.
func openPostgres(dsn string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	return stdlib.OpenDB(*cfg, stdlib.OptionShouldPing(func(_ context.Context, p stdlib.ShouldPingParams) bool {
		return p.IdleDuration > PingAfterIdle
	})), nil
}

func openStore(ctx context.Context, dsn string, create bool) (*Store, error) {
	s := &Store{dsn: Redact(dsn)}
	if err := checkScheme(dsn); err != nil {
		return nil, s.wrap(err, dsn)
	}
	var err error
	if isPostgres(dsn) {
		s.dialect = postgresDialect
		s.db, err = openPostgres(PostgresDSN(dsn))
	} else {
		s.dialect = sqliteDialect
		s.db, err = openSQLite(dsn, create)
	}
	if err != nil {
		return nil, s.wrap(err, dsn)
	}
	s.sizePool()
	pctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	if err := s.ping(pctx); err != nil {
		s.db.Close()
		return nil, s.wrap(fmt.Errorf("unreachable: %w", err), dsn)
	}
	if !create && s.dialect == sqliteDialect {
		if err := s.requireSchema(ctx); err != nil {
			s.db.Close()
			return nil, s.wrap(err, dsn)
		}
	}
	if err := s.migrate(ctx); err != nil {
		s.db.Close()
		return nil, s.wrap(err, dsn)
	}
	return s, nil
}

// ping reaches the database. A new SQLite connection switches the file to
// WAL as it opens, which takes the file's exclusive lock; SQLite answers
// SQLITE_BUSY at once, without waiting out its busy timeout, when another
// connection opening the same new file holds a lock the switch can't wait
// for (several daemons starting together on a new archive). Such a
// connection is tried again until ctx ends.
func (s *Store) ping(ctx context.Context) error {
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 500*time.Millisecond) {
		err := s.db.PingContext(ctx)
		if err == nil || s.dialect != sqliteDialect || !strings.Contains(err.Error(), "SQLITE_BUSY") {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// ErrNoArchive is why OpenExisting refuses an SQLite DSN: no such file or
// directory, or a file without an archive's schema.
var ErrNoArchive = errors.New("no archive")

// ErrUnknownScheme is why a DSN that begins with a URL scheme other than
// sqlite:, postgres:// or postgresql:// is refused.
var ErrUnknownScheme = errors.New("unknown DSN scheme")

// kindError is an error whose message says what went wrong and which is
// one of the exported kinds (ErrNoArchive, ErrUnknownScheme) for errors.Is.
type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

func noArchive(format string, args ...any) error {
	return &kindError{msg: fmt.Sprintf(format, args...), kind: ErrNoArchive}
}

// requireSchema refuses an SQLite file that holds no archive (an empty
// file, or another program's database), so that a reader never writes a
// schema into it.
func (s *Store) requireSchema(ctx context.Context) error {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return noArchive("not a wireperf archive (it has no schema_version table)")
	}
	return nil
}

// wrap names the archive in an error, and makes sure the password never
// shows, whatever the driver put in its message.
func (s *Store) wrap(err error, dsn string) error {
	msg := err.Error()
	if pw := dsnPassword(dsn); pw != "" {
		msg = strings.ReplaceAll(msg, pw, "xxxxx")
	}
	return &Error{DSN: s.dsn, Msg: RedactSecrets(msg), err: err}
}

// Error is a failure of the archive, with its DSN (password removed).
type Error struct {
	DSN string
	Msg string
	err error
}

func (e *Error) Error() string { return fmt.Sprintf("archive %s: %s", e.DSN, e.Msg) }
func (e *Error) Unwrap() error { return e.err }

// openSQLite opens a file in WAL mode, with a busy timeout and
// transactions that take the write lock at once (so that two writers
// queue rather than deadlock on a lock upgrade). Unless create is set,
// the file must exist, and is opened read-write without create
// (mode=rw): read-only (mode=ro) would leave the -wal and -shm files
// behind, since a read-only connection cannot checkpoint them away on
// closing, and could not bring an older schema up to date.
func openSQLite(dsn string, create bool) (*sql.DB, error) {
	path := strings.TrimPrefix(dsn, "sqlite:")
	path = strings.TrimPrefix(path, "//")
	if path == "" {
		return nil, errors.New("empty SQLite path")
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.Itoa(int(busyTimeout/time.Millisecond))+")")
	if create {
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
		}
		q.Add("_pragma", "journal_mode(WAL)")
	} else {
		if err := requireFile(path); err != nil {
			return nil, err
		}
		// WAL mode is kept in the file: an archive has it already, and
		// setting it would write to a file that may not be one.
		q.Set("mode", "rw")
	}
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	q.Set("_time_format", "sqlite") // instants as SQLite's own date functions read them
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	return db, nil
}

// requireFile says why path is no file to open: missing, in a missing
// directory, or a directory.
func requireFile(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if dir := filepath.Dir(path); dir != "" {
			if _, derr := os.Stat(dir); errors.Is(derr, fs.ErrNotExist) {
				return noArchive("no such file (no directory %s)", dir)
			}
		}
		return noArchive("no such file")
	case err != nil:
		return err
	case fi.IsDir():
		return noArchive("is a directory, not an archive file")
	}
	return nil
}

// The pools' sizes. Without a cap, database/sql opens a connection for
// every concurrent query: an API under load held thousands of handles
// on one SQLite file. SQLite serialises writers anyway (a transaction
// takes the write lock when it begins), and WAL lets a few readers run
// beside one writer; a PostgreSQL connection is a server process of
// several MB, and a mesh has a daemon per host, so each takes few.
const (
	SQLiteMaxConns   = 8
	PostgresMaxConns = 4
	poolIdleConns    = 2
	poolIdleTime     = time.Minute
	poolConnLifetime = 30 * time.Minute // so that a server restarted or failed over is reached anew
)

func (s *Store) sizePool() {
	n := SQLiteMaxConns
	if s.dialect == postgresDialect {
		n = PostgresMaxConns
	}
	s.SetMaxConns(n)
	s.db.SetMaxIdleConns(poolIdleConns)
	s.db.SetConnMaxIdleTime(poolIdleTime)
	s.db.SetConnMaxLifetime(poolConnLifetime)
}

// SetMaxConns caps the connections the archive opens at once (a query
// past the cap waits for one, within its context).
func (s *Store) SetMaxConns(n int) { s.db.SetMaxOpenConns(n) }

// DSN is the archive's DSN without its password.
func (s *Store) DSN() string { return s.dsn }

// Close closes the archive.
func (s *Store) Close() error { return s.db.Close() }

// q turns the ? placeholders of a query into PostgreSQL's $n.
func (s *Store) q(query string) string { return s.DB().Rebind(query) }

// DB is the database an archive is kept in, for a store that keeps its
// own tables beside the archive's (taskstore, the schedule's state): it
// shares the archive's pool, so that a daemon's connections stay within
// the archive's cap (SetMaxConns) whichever store asks.
type DB struct {
	*sql.DB
	postgres bool
}

// DB is the archive's database.
func (s *Store) DB() DB { return DB{DB: s.db, postgres: s.dialect == postgresDialect} }

// Postgres says whether the database is PostgreSQL (else SQLite).
func (d DB) Postgres() bool { return d.postgres }

// Rebind turns the ? placeholders of a query into PostgreSQL's $n.
func (d DB) Rebind(query string) string {
	if !d.postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ForUpdate is the clause that locks the rows a SELECT reads until the
// transaction ends: PostgreSQL's FOR UPDATE; nothing on SQLite, whose
// transactions take the write lock as they begin.
func (d DB) ForUpdate() string {
	if d.postgres {
		return " FOR UPDATE"
	}
	return ""
}

// IsPostgres says whether a DSN names a PostgreSQL server (else it is an
// SQLite file).
func IsPostgres(dsn string) bool { return isPostgres(dsn) }

// OpenSQLitePool opens another pool on an SQLite archive, with the
// archive's settings (WAL, busy timeout, immediate transactions), for a
// component that keeps its own tables in the same file: the job queue.
func OpenSQLitePool(dsn string) (*sql.DB, error) { return openSQLite(dsn, true) }
