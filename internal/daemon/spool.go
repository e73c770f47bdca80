package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// outcome is what became of one run: everything the archive needs to
// record it, so that a run that ended while the archive was unreachable
// is recorded, once, when it is back.
type outcome struct {
	RunID string `json:"run_id"`
	Dest  string `json:"dest"`
	Test  string `json:"test,omitempty"` // the test's name: a trace's path is kept per pair and test
	// Exclusive: the run held its hosts alone, and frees them before its
	// report is stored.
	Exclusive bool      `json:"exclusive,omitempty"`
	Cmdline   string    `json:"cmdline"`
	Document  []byte    `json:"document,omitempty"` // the test's -J document
	Began     time.Time `json:"began"`
	Ended     time.Time `json:"ended"`
	State     string    `json:"state"`
	Reason    string    `json:"reason,omitempty"`
	// JobID is the River job that worked the run, completed with its
	// result; 0 for a spooled outcome, whose job River completed when
	// its worker returned.
	JobID int64 `json:"-"`
}

// spool keeps outcomes the archive could not take, one file a run,
// written whole (a temporary file, then a rename) so that a crash leaves
// either the entry or nothing.
type spool struct{ dir string }

// maxSpoolEntry bounds one entry read back (a test's document is at most
// maxDocument).
const maxSpoolEntry = maxDocument + 1<<20

func (s spool) path(runID string) string { return filepath.Join(s.dir, runID+".json") }

func (s spool) save(o outcome) error {
	if strings.ContainsAny(o.RunID, `/\`) || o.RunID == "" || strings.HasPrefix(o.RunID, ".") {
		return fmt.Errorf("spool: run ID %q", o.RunID)
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	data, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	tmp, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	_, werr := tmp.Write(data)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("spool: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path(o.RunID)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

// entries are the spooled outcomes, oldest run first. An entry that
// can't be read is left in place and reported.
func (s spool) entries() ([]outcome, []error) {
	des, err := os.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{fmt.Errorf("spool: %w", err)}
	}
	var out []outcome
	var errs []error
	for _, de := range des {
		name := de.Name()
		if !de.Type().IsRegular() || !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		o, err := readEntry(filepath.Join(s.dir, name))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Began.Before(out[j].Began) })
	return out, errs
}

func readEntry(path string) (outcome, error) {
	var o outcome
	st, err := os.Stat(path)
	if err != nil {
		return o, fmt.Errorf("spool: %w", err)
	}
	if st.Size() > maxSpoolEntry {
		return o, fmt.Errorf("spool: %s: %d bytes, over %d", path, st.Size(), maxSpoolEntry)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return o, fmt.Errorf("spool: %w", err)
	}
	if err := json.Unmarshal(data, &o); err != nil || o.RunID+".json" != filepath.Base(path) {
		return o, fmt.Errorf("spool: %s: not an entry of this daemon", path)
	}
	return o, nil
}

func (s spool) remove(runID string) error {
	err := os.Remove(s.path(runID))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// count is the entries waiting.
func (s spool) count() int {
	des, err := os.ReadDir(s.dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, de := range des {
		if strings.HasSuffix(de.Name(), ".json") && !strings.HasPrefix(de.Name(), ".") {
			n++
		}
	}
	return n
}
