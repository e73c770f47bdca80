package archive

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wireperf/wireperf/internal/archive/archivetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func backends(t *testing.T) map[string]string { return archivetest.Backends(t) }

func open(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }

func sampleRun(id, campaign string, rep int) *Run {
	stream := 1
	start := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC).Add(time.Duration(rep) * time.Minute)
	return &Run{
		ID: id, Campaign: campaign, PointKey: "parallel=4,window=1048576", Rep: rep, Seq: rep,
		State: StateFinished, Source: SourceNative, ToolVersion: "v9", Cmdline: "wireperf sweep h -P 4",
		LocalHost: "a", RemoteHost: "b", LocalKernel: "Linux a 6.1", RemoteKernel: "Linux b 6.2",
		Started: start, Ended: start.Add(10 * time.Second),
		Document: []byte("{\n\t\"start\": {}\n}\n"), DocumentFormat: FormatJSON,
		Axes: map[string]Axis{
			"window":    {Num: f64(1 << 20), Label: "1M"},
			"parallel":  {Num: f64(4), Label: "4"},
			"direction": {Label: "up"},
		},
		Summary: Summary{Seconds: f64(10), SentBytes: i64(1e9), ReceivedBytes: i64(999e6), SentBps: f64(8e8),
			ReceivedBps: f64(7.99e8), Retransmits: i64(12), MinRTTms: f64(0.1), MeanRTTms: f64(0.25)},
		Intervals: []Interval{
			{Index: 0, Stream: &stream, SenderRole: "client", Start: 0, End: 1, Bytes: i64(100), BitsPerSecond: f64(800), Retransmits: i64(1), SndCwnd: i64(6400), RTTus: f64(250)},
			{Index: 0, SenderRole: "client", Start: 0, End: 1, Bytes: i64(100), BitsPerSecond: f64(800), Retransmits: i64(1)},
		},
		Hosts:  []HostSample{{Host: "local", T: 10, CPUUser: f64(1.5), CPUSys: f64(20), CPUSoftIRQ: f64(7), MemUsed: i64(1 << 30)}},
		Limits: []HostLimits{{Host: "local", Hostname: "a", Kernel: "Linux a 6.1", Limits: `{"rmem_max":4194304}`}},
	}
}

func TestRunRoundTrip(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			c, err := s.PutCampaign(ctx, Campaign{Name: "grid", Spec: "name: grid\n", SpecFormat: "yaml", ShuffleKey: -42})
			if err != nil {
				t.Fatal(err)
			}
			if c.SpecSHA256 == "" || c.ShuffleKey != -42 {
				t.Fatalf("campaign stored as %+v", c)
			}
			want := sampleRun("7b4a07e8b34e9efe", "grid", 0)
			if err := s.PutRun(ctx, want); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx, want.ID[:6])
			if err != nil {
				t.Fatal(err)
			}
			if !got.Started.Equal(want.Started) || !got.Ended.Equal(want.Ended) {
				t.Errorf("times: got %v..%v, want %v..%v", got.Started, got.Ended, want.Started, want.Ended)
			}
			got.Started, got.Ended, got.Recorded = want.Started, want.Ended, want.Recorded
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
			}
			list, err := s.List(ctx, Filter{Campaign: "grid"})
			if err != nil || len(list) != 1 || list[0].Document != nil || *list[0].Axes["window"].Num != 1<<20 {
				t.Fatalf("List = %+v, %v", list, err)
			}
			if _, err := s.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get(nope) = %v, want ErrNotFound", err)
			}
		})
	}
}

func TestFinishedRunIsNeverRewritten(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			r := sampleRun("r1", "", 0)
			r.State, r.Error, r.Summary, r.Intervals = StateFailed, "connection refused", Summary{}, nil
			if err := s.PutRun(ctx, r); err != nil {
				t.Fatal(err)
			}
			ok := sampleRun("r1", "", 0)
			if err := s.PutRun(ctx, ok); err != nil {
				t.Fatalf("a failed run must be replaceable by its retry: %v", err)
			}
			again := sampleRun("r1", "", 0)
			again.Document = []byte("other")
			if err := s.PutRun(ctx, again); !errors.Is(err, ErrFinished) {
				t.Fatalf("rewriting a finished run: %v, want ErrFinished", err)
			}
			got, err := s.Get(ctx, "r1")
			if err != nil {
				t.Fatal(err)
			}
			if got.Attempts != 2 || got.State != StateFinished || string(got.Document) != string(ok.Document) || len(got.Intervals) != 2 {
				t.Errorf("after retry: attempts %d state %s doc %q intervals %d", got.Attempts, got.State, got.Document, len(got.Intervals))
			}
		})
	}
}

func TestMigrationsRunOnceAndRefuseNewer(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			s.Close()
			s = open(t, dsn) // a second open finds the schema current
			var n, max int
			if err := s.db.QueryRow(`SELECT COUNT(*), MAX(version) FROM schema_version`).Scan(&n, &max); err != nil {
				t.Fatal(err)
			}
			if n != SchemaVersion() || max != SchemaVersion() {
				t.Fatalf("schema_version has %d rows up to %d, want %d", n, max, SchemaVersion())
			}
			if _, err := s.db.Exec(s.q(`INSERT INTO schema_version (version, applied, applied_by) VALUES (?, ?, ?)`),
				SchemaVersion()+1, time.Now().UTC(), "v99.0.0"); err != nil {
				t.Fatal(err)
			}
			s.Close()
			_, err := Open(ctx, dsn)
			var newer *NewerSchemaError
			if !errors.As(err, &newer) || newer.Have != SchemaVersion()+1 || newer.Know != SchemaVersion() {
				t.Fatalf("opening a newer archive: %v", err)
			}
			for _, want := range []string{fmt.Sprint(SchemaVersion() + 1), "v99.0.0", "upgrade"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q does not say %q", err, want)
				}
			}
		})
	}
}

func TestSQLiteIsWAL(t *testing.T) {
	t.Parallel()
	s := open(t, "sqlite:"+filepath.Join(t.TempDir(), "a.db"))
	var mode string
	if err := s.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v", mode, err)
	}
	var timeout int
	if err := s.db.QueryRow(`PRAGMA busy_timeout`).Scan(&timeout); err != nil || timeout < 1000 {
		t.Fatalf("busy_timeout = %d, %v", timeout, err)
	}
}

func TestUnreachableFailsAtOnceWithoutPassword(t *testing.T) {
	t.Parallel()
	start := time.Now()
	dsn := "postgres://alice:s3cretpw@127.0.0.1:1/db?sslmode=disable"
	_, err := Open(context.Background(), dsn)
	if err == nil {
		t.Fatal("opened a database on port 1")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to fail", d)
	}
	msg := err.Error()
	if strings.Contains(msg, "s3cretpw") || !strings.Contains(msg, "127.0.0.1:1") || !strings.Contains(msg, "alice") {
		t.Errorf("message %q: want the DSN without the password", msg)
	}
	if _, err := Open(context.Background(), "/proc/no/such/dir/x.db"); err == nil || !strings.Contains(err.Error(), "/proc/no/such") {
		t.Errorf("SQLite in an impossible place: %v", err)
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://u:pw@h:5432/d?sslmode=disable": "postgres://u:xxxxx@h:5432/d?sslmode=disable",
		"postgres://u@h/d":                         "postgres://u@h/d",
		"postgres://h/d?password=pw":               "postgres://h/d?password=xxxxx",
		"/var/lib/x.db":                            "/var/lib/x.db",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// Two writers, each with its own connection pool as two processes would
// have, store runs at once into one archive: nothing is lost.
func TestTwoWritersLoseNothing(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			const perWriter = 40
			a, b := open(t, dsn), open(t, dsn)
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			for w, s := range []*Store{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					camp := fmt.Sprintf("c%d", w)
					for _, c := range []string{camp, "shared"} {
						if _, err := s.PutCampaign(ctx, Campaign{Name: c, Spec: c, SpecFormat: "flags"}); err != nil {
							errs <- err
							return
						}
					}
					for i := 0; i < perWriter; i++ {
						c := camp
						if i%2 == 1 {
							c = "shared"
						}
						r := sampleRun(fmt.Sprintf("%s-w%d-%d", c, w, i), c, i)
						if err := s.PutRun(ctx, r); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			all, err := a.List(ctx, Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 2*perWriter {
				t.Fatalf("stored %d runs, want %d", len(all), 2*perWriter)
			}
			var intervals int
			if err := a.db.QueryRow(`SELECT COUNT(*) FROM run_interval`).Scan(&intervals); err != nil || intervals != 4*perWriter {
				t.Fatalf("%d interval rows (%v), want %d", intervals, err, 4*perWriter)
			}
			shared, _ := a.List(ctx, Filter{Campaign: "shared"})
			if len(shared) != perWriter {
				t.Errorf("shared campaign has %d runs, want %d", len(shared), perWriter)
			}
		})
	}
}

// Processes that open a new archive at the same instant all get the
// whole schema, once: PostgreSQL serialises them on an advisory lock
// (creating the version table too), SQLite on its write lock.
func TestOpenNewArchiveConcurrently(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			const n = 6
			var wg sync.WaitGroup
			gate := make(chan struct{})
			errs := make([]error, n)
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					<-gate
					s, err := Open(context.Background(), dsn)
					if err == nil {
						s.Close()
					}
					errs[i] = err
				}(i)
			}
			close(gate)
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("opener %d: %v", i, err)
				}
			}
			s := open(t, dsn)
			var versions, top int
			if err := s.db.QueryRow(`SELECT COUNT(*), MAX(version) FROM schema_version`).Scan(&versions, &top); err != nil {
				t.Fatal(err)
			}
			if versions != SchemaVersion() || top != SchemaVersion() {
				t.Fatalf("%d versions recorded, the newest %d; want each of %d once", versions, top, SchemaVersion())
			}
		})
	}
}

// openAtSchema opens a new archive at dsn with the schema of that
// version, as an older wireperf made it.
func openAtSchema(t *testing.T, dsn string, version int) *Store {
	t.Helper()
	migrateOnlyTo = version
	defer func() { migrateOnlyTo = 0 }()
	return open(t, dsn)
}
