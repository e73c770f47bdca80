package campaign

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
)

// A campaign is held by one sweep at a time: a second hold is refused,
// naming the first; another campaign is not held; a released campaign
// can be held again.
func TestHoldOneAtATime(t *testing.T) {
	for name, db := range archivetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st, err := archive.Open(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			log := slog.New(slog.DiscardHandler)
			release, err := Hold(ctx, st, "held", log)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Hold(ctx, st, "held", log)
			if err == nil || !strings.Contains(err.Error(), `campaign "held" is being run by another sweep (sweep on `) {
				t.Fatalf("a second hold: %v, want refused naming the first", err)
			}
			releaseOther, err := Hold(ctx, st, "other", log)
			if err != nil {
				t.Fatalf("another campaign: %v", err)
			}
			releaseOther()
			release()
			again, err := Hold(ctx, st, "held", log)
			if err != nil {
				t.Fatalf("after the release: %v", err)
			}
			again()
		})
	}
}
