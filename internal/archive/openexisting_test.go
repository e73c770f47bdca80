package archive

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// dirEntries lists dir's names, sorted.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// oneLine fails the test unless err is one line that says each of want.
func oneLine(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("%q is not one line", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %q", err, w)
		}
	}
}

func TestOpenExistingRefusesAMissingFileAndCreatesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ name, dsn, path, say string }{
		{"file", filepath.Join(dir, "wireperf.db"), filepath.Join(dir, "wireperf.db"), "no such file"},
		{"sqlite: prefix", "sqlite:" + filepath.Join(dir, "wireperf.db"), filepath.Join(dir, "wireperf.db"), "no such file"},
		{"directory", filepath.Join(dir, "sub", "deeper", "wireperf.db"), filepath.Join(dir, "sub", "deeper", "wireperf.db"), "no directory " + filepath.Join(dir, "sub", "deeper")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenExisting(context.Background(), tc.dsn)
			if !errors.Is(err, ErrNoArchive) {
				t.Fatalf("OpenExisting(%q) = %v, want ErrNoArchive", tc.dsn, err)
			}
			oneLine(t, err, "archive "+tc.dsn+": ", tc.say)
			if got := dirEntries(t, dir); len(got) != 0 {
				t.Fatalf("OpenExisting(%q) left %q in %s", tc.dsn, got, dir)
			}
		})
	}
}

func TestOpenExistingRefusesWhatIsNoArchive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := OpenExisting(context.Background(), empty)
	if !errors.Is(err, ErrNoArchive) {
		t.Fatalf("an empty file: %v, want ErrNoArchive", err)
	}
	oneLine(t, err, empty, "not a wireperf archive")
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Fatalf("the empty file was written to: %v, %v", fi, err)
	}
	if got := dirEntries(t, dir); !slices.Equal(got, []string{"empty.db"}) {
		t.Fatalf("left %q", got)
	}

	_, err = OpenExisting(context.Background(), dir)
	if !errors.Is(err, ErrNoArchive) {
		t.Fatalf("a directory: %v, want ErrNoArchive", err)
	}
	oneLine(t, err, "is a directory")
}

// A reader opens an archive that a writer made, on every backend, and
// reads what the writer stored.
func TestOpenExistingReadsAnArchive(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			w := open(t, dsn)
			if err := w.PutRun(ctx, sampleRun("0123456789abcdef", "", 0)); err != nil {
				t.Fatal(err)
			}
			w.Close()
			dsns := []string{dsn}
			if name == "sqlite" {
				dsns = append(dsns, "sqlite:"+dsn)
			}
			for _, d := range dsns {
				r, err := OpenExisting(ctx, d)
				if err != nil {
					t.Fatalf("OpenExisting(%q): %v", d, err)
				}
				got, err := r.Get(ctx, "0123456789")
				r.Close()
				if err != nil || got.ID != "0123456789abcdef" {
					t.Fatalf("OpenExisting(%q): Get = %v, %v", d, got, err)
				}
			}
		})
	}
}

// A reader leaves nothing beside the file: opened read-only, SQLite could
// not remove the -wal and -shm files on closing.
func TestOpenExistingLeavesOnlyTheArchive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "wireperf.db")
	open(t, path).Close()
	if got := dirEntries(t, dir); !slices.Equal(got, []string{"wireperf.db"}) {
		t.Fatalf("after the writer: %q", got)
	}
	r, err := OpenExisting(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := r.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v", mode, err)
	}
	if _, err := r.List(context.Background(), Filter{}); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if got := dirEntries(t, dir); !slices.Equal(got, []string{"wireperf.db"}) {
		t.Fatalf("after the reader: %q", got)
	}
}

// A reader brings an older schema up to date, as a writer does, and
// refuses a newer one.
func TestOpenExistingMigrates(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wireperf.db")
	w := openAtSchema(t, path, 1)
	w.Close()
	r, err := OpenExisting(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var v int
	if err := r.db.QueryRow(`SELECT MAX(version) FROM schema_version`).Scan(&v); err != nil || v != SchemaVersion() {
		t.Fatalf("schema version %d, %v; want %d", v, err, SchemaVersion())
	}
	if _, err := r.db.Exec(`SELECT COUNT(*) FROM sched_task`); err != nil { // the schedule's tables too
		t.Fatal(err)
	}
	if _, err := r.db.Exec(`INSERT INTO schema_version (version, applied, applied_by) VALUES (?, CURRENT_TIMESTAMP, 'v99.0.0')`, SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	r.Close()
	var newer *NewerSchemaError
	if _, err := OpenExisting(ctx, path); !errors.As(err, &newer) {
		t.Fatalf("a newer archive: %v", err)
	}
}

func TestDSNScheme(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ dsn, want string }{
		{"mysql://u@h/db", "mysql"},
		{" MySQL://u@h/db", "MySQL"},
		{"file:///tmp/a.db", "file"},
		{"a+b.c-d://x", "a+b.c-d"},
		{"postgres://u@h/db", "postgres"},
		{"sqlite:///tmp/a.db", "sqlite"},
		{"sqlite:a.db", ""},
		{`C:\data\wireperf.db`, ""},
		{"C:/data/wireperf.db", ""},
		{"C://data/wireperf.db", ""},
		{"./mysql://u@h/db", ""},
		{"data/x://y", ""},
		{"1ab://x", ""},
		{"wireperf.db", ""},
		{"host=h options='-c x://y'", ""},
	} {
		if got := dsnScheme(tc.dsn); got != tc.want {
			t.Errorf("dsnScheme(%q) = %q, want %q", tc.dsn, got, tc.want)
		}
	}
}

// A DSN with a scheme wireperf does not read is refused by readers and
// writers alike, naming the schemes it does read, without its password,
// and without a file made of it.
func TestUnknownSchemeRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, dsn := range []string{"mysql://u:S3cret@h/db", "file:///tmp/x.db", "SQLITE:///tmp/x.db", "Http://h/x"} {
		for name, openFn := range map[string]func(context.Context, string) (*Store, error){"Open": Open, "OpenExisting": OpenExisting} {
			_, err := openFn(context.Background(), dsn)
			if !errors.Is(err, ErrUnknownScheme) {
				t.Fatalf("%s(%q) = %v, want ErrUnknownScheme", name, dsn, err)
			}
			scheme, _, _ := strings.Cut(dsn, "://")
			oneLine(t, err, `unknown scheme "`+scheme+`"`, "file path", "sqlite:PATH", "postgres://", "postgresql://")
			if strings.Contains(err.Error(), "S3cret") {
				t.Errorf("%q shows the password", err)
			}
		}
	}
	if got := dirEntries(t, dir); len(got) != 0 {
		t.Fatalf("left %q", got)
	}
}

// Paths that look a little like URLs are still SQLite files.
func TestPathsAreNotSchemes(t *testing.T) {
	for _, dsn := range []string{`C:\data\wireperf.db`, "C:/data/wireperf.db", "./mysql:/x", "rel/wireperf.db", "sqlite:a.db", "sqlite:///tmp/a.db", "host=h dbname=d", "postgresql://u@h/db"} {
		if err := checkScheme(dsn); err != nil {
			t.Errorf("checkScheme(%q) = %v", dsn, err)
		}
	}
	t.Chdir(t.TempDir())
	for _, dsn := range []string{"wireperf.db", "sqlite:other.db", "sub/third.db"} {
		s, err := Open(context.Background(), dsn)
		if err != nil {
			t.Fatalf("Open(%q): %v", dsn, err)
		}
		s.Close()
		if r, err := OpenExisting(context.Background(), dsn); err != nil {
			t.Fatalf("OpenExisting(%q): %v", dsn, err)
		} else {
			r.Close()
		}
	}
}
