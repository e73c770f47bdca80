// Package archivetest gives tests fresh archives on every database they
// can reach: SQLite always, and PostgreSQL when WIREPERF_TEST_PG_DSN
// names a server (.ci/pg.sh starts a throw-away one).
package archivetest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
)

// EnvPG names the PostgreSQL server for tests.
const EnvPG = "WIREPERF_TEST_PG_DSN"

// Backends returns a DSN per database, each an empty archive of its own:
// a file in the test's temporary directory, and a new PostgreSQL database
// dropped when the test ends.
func Backends(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{"sqlite": filepath.Join(t.TempDir(), "sub", "wireperf.db")}
	base := os.Getenv(EnvPG)
	if base == "" {
		t.Logf("%s not set: PostgreSQL not tested", EnvPG)
		return out
	}
	var b [6]byte
	rand.Read(b[:])
	name := "wptest_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		admin.Close()
		t.Fatalf("creating a test database (%s): %v", EnvPG, err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP DATABASE " + name + " WITH (FORCE)")
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	out["postgres"] = u.String()
	return out
}
