package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/runner"
	"github.com/wireperf/wireperf/internal/spec"
)

func TestSaveRunStoresASingleTest(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	res := &result.Result{Spec: spec.Default(), StartedAt: time.Now().UTC(),
		Local:  result.End{Role: result.RoleClient, Streams: []result.Stream{{ID: 1, Sender: true, Start: 0, End: 1, Bytes: 1e6}}},
		Remote: result.End{Role: result.RoleServer, Streams: []result.Stream{{ID: 1, Sender: false, Start: 0, End: 1, Bytes: 1e6}}}}
	id, err := runner.SaveClient(context.Background(), db, res, nil, []string{"wireperf", "client", "h", "--save"})
	if err != nil {
		t.Fatal(err)
	}
	failedID, err := runner.SaveClient(context.Background(), db, nil, errors.New("connection refused"), []string{"wireperf", "client", "x"})
	if err != nil || failedID == id {
		t.Fatal(err)
	}
	runs := listRuns(t, "--db", db)
	if len(runs) != 2 {
		t.Fatalf("%d runs", len(runs))
	}
	for _, r := range runs {
		switch r.ID {
		case id:
			if r.State != archive.StateFinished || r.Source != "native" || r.Summary["received_bits_per_second"] != 8e6 {
				t.Errorf("saved run %+v", r)
			}
		case failedID:
			if r.State != archive.StateFailed || !strings.Contains(r.Error, "refused") {
				t.Errorf("failed run %+v", r)
			}
		}
	}
}

// TestClientSaveStoresTheRun: --save on a real client test stores it,
// with the goodput the report printed; an archive that can't be opened
// fails before any test runs.
func TestClientSaveStoresTheRun(t *testing.T) {
	port := startServer(t)
	db := filepath.Join(t.TempDir(), "a.db")
	code, out, stderr := runCLI("client", "127.0.0.1", "-p", strconv.Itoa(port), "-t", "1", "-i", "0", "-J", "--save", "--db", db)
	if code != 0 {
		t.Fatalf("client --save: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "saved as run ") {
		t.Errorf("stderr %q does not name the saved run", stderr)
	}
	runs := listRuns(t, "--db", db)
	if len(runs) != 1 || runs[0].State != archive.StateFinished {
		t.Fatalf("runs %+v, want one finished", runs)
	}
	var doc struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if got, want := runs[0].Summary["received_bits_per_second"], doc.End.SumReceived.BitsPerSecond; want <= 0 || got != want {
		t.Errorf("stored goodput %v, the report's %v", got, want)
	}

	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(file, "a.db") // a directory that is a file
	if code, _, stderr := runCLI("client", "127.0.0.1", "-p", strconv.Itoa(port), "-t", "1", "--save", "--db", "sqlite:"+bad); code == 0 || strings.Contains(stderr, "Connecting") {
		t.Errorf("an archive that can't be opened: exit %d, stderr %q; want a failure before the test", code, stderr)
	}
}

// A selftest stops its own server before it stores the run, and a
// client cut short by Ctrl-C has a cancelled context: neither may lose
// the run it printed.
func TestSelftestSaveStoresTheRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	code, _, stderr := runCLI("selftest", "-t", "0.5", "--save", "--db", db)
	if code != 0 || !strings.Contains(stderr, "saved as run ") {
		t.Fatalf("selftest --save: exit %d: %s", code, stderr)
	}
	runs := listRuns(t, "--db", db)
	if len(runs) != 1 || runs[0].State != archive.StateFinished || runs[0].Summary["received_bits_per_second"] <= 0 {
		t.Fatalf("stored %+v", runs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := runner.SaveClient(ctx, db, nil, context.Canceled, []string{"wireperf", "client", "h", "--save"}); err != nil {
		t.Fatalf("saving with a cancelled context: %v", err)
	}
	if n := len(listRuns(t, "--db", db)); n != 2 {
		t.Fatalf("%d runs after the interrupted one, want 2", n)
	}
}
