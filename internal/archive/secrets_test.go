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
		"host=db sslpassword=S3cret sslkey=/k.pem passfile=/S3/pgpass dbname=w": "host=db sslpassword=xxxxx sslkey=/k.pem passfile=xxxxx dbname=w",
		"host=db SSLPASSWORD='S3 cret' PassFile=/S3":                            "host=db SSLPASSWORD=xxxxx PassFile=xxxxx",
		"postgres://db/w?sslpassword=S3cret&sslmode=require":                    "postgres://db/w?sslmode=require&sslpassword=xxxxx",
		"postgres://wp:S3cret@db/w?passfile=%2FS3%2Fpgpass":                     "postgres://wp:xxxxx@db/w?passfile=xxxxx",
		"mysql://wp:S3cret@db/w":                                                "mysql://wp:xxxxx@db/w",
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
		// Every secret keyword, in every form: key=value, a URL's query,
		// a URL's user:password of any scheme, quoted or not.
		"wireperf sweep --db 'host=db sslpassword=S3cret sslkey=/k dbname=w' x.yaml",
		"wireperf sweep --db 'host=db passfile=/home/S3cret/.pgpass' x.yaml",
		"wireperf -c h --db postgres://db/w?sslpassword=S3cret&x=1",
		"wireperf -c h --db 'postgres://db/w?sslmode=require&passfile=/S3cret/p'",
		`wireperf -c h --db "host=db password='S3 cr\'et' dbname=w"`,
		`wireperf -c h --db 'host=db password="S3 cret" dbname=w'`,
		"wireperf -c h --db 'host=db password = S3cret'",
		"wireperf -c h --db 'host=db PASSWORD=S3cret'",
		"wireperf -c h --db mysql://wp:S3cret@db/w",
		"PGPASSWORD=S3cret wireperf -c h --db host=db",
		"wireperf -c h --db host=db\tsslpassword=S3cret",
	} {
		got := RedactSecrets(line)
		if strings.Contains(got, "S3") || !strings.Contains(got, "xxxxx") {
			t.Errorf("%q → %q", line, got)
		}
	}
	for _, line := range []string{
		"wireperf -c h -t 10 --db /tmp/a.db",
		"wireperf -c h -T 'my password is long' --db 'host=db sslmode=require sslkey=/k.pem'",
		"wireperf -c http://h:5201/x",
	} {
		if got := RedactSecrets(line); got != line {
			t.Errorf("a line without secrets changed: %q → %q", line, got)
		}
	}
	// What is not secret stays readable.
	line := "wireperf sweep --db 'host=db sslpassword=S3cret sslkey=/k dbname=w' x.yaml"
	if got, want := RedactSecrets(line), "wireperf sweep --db 'host=db sslpassword=xxxxx sslkey=/k dbname=w' x.yaml"; got != want {
		t.Errorf("%q → %q, want %q", line, got, want)
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
				Cmdline: "wireperf -c h --save --db postgres://wp:S3cret@db/wireperf?sslpassword=S3cret2 --title 'host=h sslpassword=S3cret3'",
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
