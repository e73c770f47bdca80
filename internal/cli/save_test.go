package cli

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

func TestSaveRunStoresASingleTest(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	res := &result.Result{Spec: spec.Default(), StartedAt: time.Now().UTC(),
		Local:  result.End{Role: result.RoleClient, Streams: []result.Stream{{ID: 1, Sender: true, Start: 0, End: 1, Bytes: 1e6}}},
		Remote: result.End{Role: result.RoleServer, Streams: []result.Stream{{ID: 1, Sender: false, Start: 0, End: 1, Bytes: 1e6}}}}
	id, err := saveRun(context.Background(), db, res, nil, []string{"wireperf", "client", "h", "--save"})
	if err != nil {
		t.Fatal(err)
	}
	failedID, err := saveRun(context.Background(), db, nil, errors.New("connection refused"), []string{"wireperf", "client", "x"})
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
