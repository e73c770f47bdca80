// Package logimport reads old test logs into archive runs: iperf2's text
// output (client and server, with or without intervals, [SUM] lines and
// UDP reports) and its -y C CSV form, iperf3's -J JSON, and wireperf's own
// -J JSON. Each parser is strict about what it takes from the bytes and
// never trusts a length or count it reads.
package logimport

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
)

// MaxFileSize bounds one log; bigger files are not logs we read.
const MaxFileSize = 256 << 20

// Kinds are the logs File reads, as a person names them.
const Kinds = "iperf2 text or -y C, iperf3 -J, wireperf -J"

// NotLogError says why a file is not a log we import.
type NotLogError struct{ Reason string }

func (e *NotLogError) Error() string { return "not a log: " + e.Reason }

func notLog(format string, args ...any) error {
	return &NotLogError{Reason: fmt.Sprintf(format, args...)}
}

// SHA256 is a file's checksum, as the archive keeps it.
func SHA256(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// File reads one log into runs: one per test in it (a server's log may
// hold several). name is kept as the runs' source file.
func File(name string, data []byte) ([]*archive.Run, error) {
	if len(data) > MaxFileSize {
		return nil, notLog("larger than %d MiB", MaxFileSize>>20)
	}
	head := data
	if len(head) > 8192 {
		head = head[:8192]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return nil, notLog("binary data")
	}
	sum := SHA256(data)
	base := &archive.Run{SourceFile: name, SourceSHA256: sum, State: archive.StateFinished, Recorded: time.Now()}
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		return nil, notLog("empty")
	case trimmed[0] == '{':
		r, err := fromJSON(base, data)
		if err != nil {
			return nil, err
		}
		if err := checkFinite(r); err != nil {
			return nil, err
		}
		return []*archive.Run{r}, nil
	case reCSV.Match(firstLine(trimmed)):
		t, started, err := ParseIperf2CSV(data)
		switch {
		case errors.Is(err, errNotCSV):
			return nil, notLog("%v", err)
		case err != nil:
			return nil, err
		}
		r := *base
		r.ID, r.Source, r.Started = archive.ImportID(sum), archive.SourceIperf2Text, started
		r.Document, r.DocumentFormat = data, archive.FormatCSV
		if err := t.fill(&r); err != nil {
			return nil, err
		}
		if err := checkFinite(&r); err != nil {
			return nil, err
		}
		return []*archive.Run{&r}, nil
	}
	tests, err := ParseIperf2Text(data)
	if err != nil {
		return nil, err
	}
	if len(tests) == 0 {
		return nil, notLog("no iperf report lines (\"[ ID] start-end sec bytes rate\")")
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	var runs []*archive.Run
	from := 0
	for i, t := range tests {
		r := *base
		r.ID, r.Source = archive.ImportID(sum), archive.SourceIperf2Text
		if len(tests) > 1 {
			r.ID = fmt.Sprintf("%s-%d", r.ID, i+1)
		}
		to := t.LastLine
		if i == len(tests)-1 || to > len(lines) {
			to = len(lines)
		}
		if from > to {
			from = to
		}
		r.Document, r.DocumentFormat = bytes.Join(lines[from:to], nil), archive.FormatText
		from = to
		if err := t.fill(&r); err != nil {
			return nil, err
		}
		if err := checkFinite(&r); err != nil {
			return nil, fmt.Errorf("lines %d-%d: %w", t.FirstLine, t.LastLine, err)
		}
		runs = append(runs, &r)
	}
	return runs, nil
}

// checkFinite refuses a run with a figure that JSON cannot hold (±Inf,
// NaN): whatever computed it from the log, such a row would break every
// JSON listing of the archive it is stored in.
func checkFinite(r *archive.Run) error {
	_, err := json.Marshal(struct {
		A map[string]archive.Axis
		S archive.Summary
		I []archive.Interval
		H []archive.HostSample
		L []archive.HostLimits
	}{r.Axes, r.Summary, r.Intervals, r.Hosts, r.Limits})
	var uv *json.UnsupportedValueError
	if errors.As(err, &uv) {
		return fmt.Errorf("a figure of the test is %s: out of range, not a figure a test measures", uv.Str)
	}
	return err
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return bytes.TrimSpace(b[:i])
	}
	return b
}

func fromJSON(base *archive.Run, data []byte) (*archive.Run, error) {
	p, err := archive.ParseDocument(data)
	if err != nil {
		if errors.Is(err, archive.ErrNotDocument) {
			return nil, notLog("JSON, but not an iperf3 or wireperf -J document")
		}
		return nil, err
	}
	r := *base
	r.ID, r.Source = archive.ImportID(base.SourceSHA256), archive.SourceIperf3JSON
	if p.Wireperf {
		r.Source = archive.SourceWireperfJSN
	}
	r.Document, r.DocumentFormat = data, archive.FormatJSON
	r.ToolVersion, r.Started, r.Ended = p.Version, p.Started, p.Ended
	r.LocalHost, r.RemoteHost, r.LocalKernel, r.RemoteKernel = p.LocalHost, p.RemoteHost, p.LocalKernel, p.RemoteKernel
	r.Summary, r.Intervals, r.Hosts, r.Limits, r.Axes = p.Summary, p.Intervals, p.Hosts, p.Limits, p.Axes
	if p.Error != "" {
		r.State, r.Error = archive.StateFailed, p.Error
	}
	return &r, nil
}

// Kind names what File found, for messages.
func Kind(runs []*archive.Run) string {
	if len(runs) == 0 {
		return ""
	}
	k := runs[0].Source
	if runs[0].DocumentFormat == archive.FormatCSV {
		k += " (-y C)"
	}
	return k
}
