package runrecord

import (
	"context"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
)

// Store stores rec in the archive db names (archive.ResolveDSN: the
// --db flag, $WIREPERF_DB or the default), creating the archive if need
// be. It stores with a context of its own, cut off from ctx's end, so
// that a test cut short by Ctrl-C, or a selftest that has stopped its
// server, is still recorded.
func Store(ctx context.Context, db string, rec *archive.Run) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	dsn, err := archive.ResolveDSN(db)
	if err != nil {
		return err
	}
	store, err := archive.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer store.Close()
	return store.PutRun(ctx, rec)
}
