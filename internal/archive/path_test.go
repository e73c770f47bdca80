package archive

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// A pair's paths are stored in order, each compared with the one before
// it: a changed hop counts, a hop that fell silent does not, and storing
// a run's path again replaces it.
func TestPaths(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t, dsn)
			ctx := context.Background()
			t0 := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
			put := func(id, dest string, at time.Time, hops ...string) *Path {
				t.Helper()
				r := &Run{ID: id, State: StateFinished, Source: SourceNative, LocalHost: "a", RemoteHost: dest, Started: at, Ended: at.Add(time.Second)}
				if err := s.PutRun(ctx, r); err != nil && !errors.Is(err, ErrFinished) {
					t.Fatal(err)
				}
				p := &Path{RunID: id, Source: "a", Dest: dest, Test: "path", At: at, Hops: hops, Reached: true}
				if err := s.PutPath(ctx, p); err != nil {
					t.Fatal(err)
				}
				return p
			}
			if p := put("r1", "b", t0, "10.0.0.1", "10.0.1.2"); p.Changed || p.Prev != nil {
				t.Fatalf("the first path: %+v", p)
			}
			if p := put("r2", "b", t0.Add(time.Minute), "10.0.0.1", "*"); p.Changed {
				t.Fatalf("a silent hop counted as a change: %+v", p)
			}
			p := put("r3", "b", t0.Add(2*time.Minute), "10.0.0.1", "10.0.9.1", "10.0.1.2")
			if !p.Changed || !slices.Equal(p.Prev, []string{"10.0.0.1", "*"}) {
				t.Fatalf("a longer path: %+v", p)
			}
			put("r4", "b", t0.Add(3*time.Minute), "10.0.0.1", "10.0.9.1", "10.0.1.2")
			put("r5", "c", t0, "10.0.0.1")
			// Stored again (a spooled run recorded twice): the same result.
			put("r3", "b", t0.Add(2*time.Minute), "10.0.0.1", "10.0.9.1", "10.0.1.2")

			all, err := s.Paths(ctx, PathFilter{Source: "a", Dest: "b"})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, p := range all {
				ids = append(ids, p.RunID)
			}
			if !slices.Equal(ids, []string{"r1", "r2", "r3", "r4"}) || !all[2].At.Equal(t0.Add(2*time.Minute)) || !all[2].Changed || !all[2].Reached {
				t.Fatalf("paths %v: %+v", ids, all)
			}
			changed, err := s.Paths(ctx, PathFilter{ChangedOnly: true, Since: t0.Add(time.Minute)})
			if err != nil || len(changed) != 1 || changed[0].RunID != "r3" {
				t.Fatalf("changed: %+v, %v", changed, err)
			}
			counts, err := s.PathChanges(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := map[PathPair]int64{{"a", "b", "path"}: 1, {"a", "c", "path"}: 0}
			if len(counts) != len(want) || counts[PathPair{"a", "b", "path"}] != 1 || counts[PathPair{"a", "c", "path"}] != 0 {
				t.Fatalf("counts %v, want %v", counts, want)
			}
		})
	}
}
