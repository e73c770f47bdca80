package archive

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func TestIsPostgres(t *testing.T) {
	t.Parallel()
	for dsn, want := range map[string]bool{
		"postgres://wp@db/wireperf":              true,
		"POSTGRES://wp:pw@db/wireperf":           true,
		"PostgreSQL://db/wireperf":               true,
		"host=db dbname=wireperf password=pw":    true,
		"host=db password='a b' sslmode=disable": true,
		"  user=wp\thost=db":                     true,
		"/var/lib/wireperf/wireperf.db":          false,
		"sqlite:host=x.db":                       false,
		"wireperf.db":                            false,
		"./a=b.db":                               false,
		"frobnicate=1":                           false,
		"host='unterminated":                     false,
		"C:\\data\\wireperf.db":                  false,
	} {
		if got := isPostgres(dsn); got != want {
			t.Errorf("isPostgres(%q) = %v", dsn, got)
		}
	}
}

func TestRedactDSN(t *testing.T) {
	t.Parallel()
	for dsn, want := range map[string]string{
		"postgres://wp:S3cret@db:5432/wireperf?sslmode=disable": "postgres://wp:xxxxx@db:5432/wireperf?sslmode=disable",
		"POSTGRES://wp:S3cret@db/wireperf":                      "postgres://wp:xxxxx@db/wireperf",
		"postgres://db/wireperf?password=S3cret":                "postgres://db/wireperf?password=xxxxx",
		"host=db password=S3cret dbname=w":                      "host=db password=xxxxx dbname=w",
		"host=db password='S3 cr\\'et' user='a b'":              "host=db password=xxxxx user='a b'",
		"/tmp/x.db": "/tmp/x.db",
	} {
		if got := Redact(dsn); got != want || strings.Contains(got, "S3") {
			t.Errorf("Redact(%q) = %q, want %q", dsn, got, want)
		}
	}
}

func TestRedactSecrets(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		"wireperf -c h --save --db postgres://wp:S3cret@db/wireperf",
		"wireperf -c h --save --db=POSTGRESQL://wp:S3cret@db:5432/w?sslmode=disable",
		"wireperf sweep --db 'host=db password=S3cret dbname=w' x.yaml",
		"wireperf sweep --db host=db password='S3 cret' x.yaml",
		"wireperf -c h --db postgres://db/w?sslmode=disable&password=S3cret&x=1",
		"failed: connect to user=wp password=S3cret host=db: refused",
	} {
		got := RedactSecrets(line)
		if strings.Contains(got, "S3") || !strings.Contains(got, "xxxxx") {
			t.Errorf("%q → %q", line, got)
		}
	}
	if got := RedactSecrets("wireperf -c h -t 10 --db /tmp/a.db"); got != "wireperf -c h -t 10 --db /tmp/a.db" {
		t.Errorf("a line without secrets changed: %q", got)
	}
}

// A key=value DSN or an upper-case scheme is PostgreSQL's: nothing named
// after the password is created, and no error shows it.
func TestKeyValueDSNIsNotAPath(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, dsn := range []string{
		"host=127.0.0.1 port=1 user=wp password=S3cretPW dbname=w connect_timeout=1",
		"POSTGRES://wp:S3cretPW@127.0.0.1:1/w?connect_timeout=1",
	} {
		_, err := Open(context.Background(), dsn)
		if err == nil {
			t.Fatalf("%s: opened", dsn)
		}
		if strings.Contains(err.Error(), "S3cretPW") {
			t.Errorf("the error shows the password: %v", err)
		}
		if !strings.Contains(err.Error(), "unreachable") {
			t.Errorf("%s: not taken as PostgreSQL: %v", Redact(dsn), err)
		}
	}
	if des, _ := os.ReadDir("."); len(des) != 0 {
		t.Fatalf("files were created: %v", des)
	}
}

// No password reaches the archive, whatever a caller passes.
func TestNoPasswordStored(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t, dsn)
			ctx := context.Background()
			r := &Run{ID: "secret-1", State: StateFailed, Source: SourceNative, Started: time.Now(),
				Cmdline: "wireperf -c h --save --db postgres://wp:S3cret@db/wireperf",
				Error:   "archive host=db password=S3cret: refused"}
			if err := s.PutRun(ctx, r); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx, "secret-1")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(got.Cmdline+got.Error, "S3cret") || !strings.Contains(got.Cmdline, "xxxxx") {
				t.Fatalf("stored %q / %q", got.Cmdline, got.Error)
			}
		})
	}
}

// An upper-case scheme reaches the server.
func TestUpperCaseSchemeOpens(t *testing.T) {
	t.Parallel()
	dsn, ok := backends(t)["postgres"]
	if !ok {
		t.Skip("needs PostgreSQL")
	}
	s := open(t, "POSTGRES"+strings.TrimPrefix(dsn, "postgres"))
	if s.dialect != postgresDialect {
		t.Fatal("not PostgreSQL")
	}
}
