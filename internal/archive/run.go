package archive

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Run states.
const (
	StateScheduled = "scheduled"
	StateRunning   = "running"
	StateFinished  = "finished"
	StateFailed    = "failed"
	StateMissed    = "missed"
	StateAborted   = "aborted"
)

// Sources of a run.
const (
	SourceNative      = "native"
	SourceIperf3JSON  = "iperf3-json"
	SourceIperf2Text  = "iperf2-text"
	SourceWireperfJSN = "wireperf-json"
)

// Document formats.
const (
	FormatJSON = "json" // the -J document
	FormatText = "text" // a text log, as iperf printed it
	FormatCSV  = "csv"  // iperf2's -y C
)

// Campaign is a planned set of runs, as the user gave it.
type Campaign struct {
	Name       string
	Spec       string // the file or command line, as given
	SpecFormat string // "yaml" or "flags"
	SpecSHA256 string
	ShuffleKey int64
	Created    time.Time
	// RateRule is how the spec's rates read their suffixes:
	// RateRuleDecimal, or RateRuleUpperBinary for a campaign stored
	// before rates followed iperf3. PutCampaign stores RateRuleDecimal
	// when it is empty.
	RateRule string
}

// Rate rules a stored campaign's spec was read by.
const (
	// RateRuleDecimal: k, m, g, t are powers of 1000 in either case, as
	// iperf3 reads -b ("1G" is 10^9 bit/s).
	RateRuleDecimal = "decimal"
	// RateRuleUpperBinary: upper-case K, M, G, T are powers of 1024
	// ("1G" is 2^30 bit/s), as wireperf read rates before.
	RateRuleUpperBinary = "upper-binary"
)

// Axis is one axis value of a run: a number in base units (bytes, bits
// per second, seconds) where the axis has one, and its label as given.
type Axis struct {
	Num   *float64
	Label string
}

// Summary is what queries and tables use. A nil field does not apply to
// the run (no RTT in a UDP test, no jitter in TCP).
type Summary struct {
	Seconds       *float64
	SentBytes     *int64
	ReceivedBytes *int64
	SentBps       *float64
	ReceivedBps   *float64
	Retransmits   *int64
	MinRTTms      *float64
	MeanRTTms     *float64
	LostPercent   *float64
	JitterMs      *float64
	RRp50us       *float64
	RRp99us       *float64
	// ProbeP50us and ProbeP99us are a probe's (ping's echo RTT,
	// tcp-connect's handshake) percentiles.
	ProbeP50us *float64
	ProbeP99us *float64
	OutOfOrder *int64 // UDP datagrams received out of order
	// Figures are the further figures (FigureColumns) by name, where the
	// run's document has them; runs stored before these were kept have
	// none.
	Figures map[string]float64
}

// Interval is one stream in one reporting interval; Stream nil is the
// interval's sum.
type Interval struct {
	Index         int
	Stream        *int
	SenderRole    string
	Start, End    float64
	Bytes         *int64
	ReceivedBytes *int64
	BitsPerSecond *float64
	Retransmits   *int64
	SndCwnd       *int64
	RTTus         *float64
	Packets       *int64
	LostPackets   *int64
	JitterMs      *float64
	Omitted       bool
}

// HostSample is one host's use over (part of) a run; host is "local" or
// "remote".
type HostSample struct {
	Host       string
	T          float64 // seconds since the run's start
	CPUUser    *float64
	CPUSys     *float64
	CPUSoftIRQ *float64
	MemUsed    *int64
}

// HostLimits is one host's identity and kernel limits during a run.
type HostLimits struct {
	Host     string // "local" or "remote"
	Hostname string
	Kernel   string
	Limits   string // JSON: rmem_max, wmem_max, tcp_rmem, tcp_wmem, congestion, qdisc, MTU
}

// Run is one stored test.
type Run struct {
	ID             string
	Campaign       string // "" for a run outside a campaign
	PointKey       string
	Rep            int
	Seq            int // position in the campaign's order
	State          string
	Error          string
	Attempts       int
	Source         string
	SourceFile     string
	SourceSHA256   string
	ToolVersion    string
	Cmdline        string
	LocalHost      string
	RemoteHost     string
	LocalKernel    string
	RemoteKernel   string
	Started        time.Time
	Ended          time.Time
	Document       []byte // the -J document or the log, byte for byte
	DocumentFormat string
	Rounded        bool // byte counts are as a text log printed them, rounded
	Recorded       time.Time

	Axes      map[string]Axis
	Summary   Summary
	Intervals []Interval // filled by Get, not by List
	Hosts     []HostSample
	Limits    []HostLimits
}

// ImportID is an imported log's ID, from its SHA-256, so that a file
// imported twice is stored once.
func ImportID(sha256hex string) string {
	if len(sha256hex) > 16 {
		sha256hex = sha256hex[:16]
	}
	return "f" + sha256hex
}

// ErrFinished refuses to write over a finished run: a stored result is
// never rewritten.
var ErrFinished = errors.New("run already finished")

// ErrNotFound is a run or campaign that is not in the archive.
var ErrNotFound = errors.New("not found")

// PutCampaign stores a campaign, or returns the one already stored under
// its name.
func (s *Store) PutCampaign(ctx context.Context, c Campaign) (Campaign, error) {
	if c.Created.IsZero() {
		c.Created = time.Now()
	}
	if c.SpecSHA256 == "" {
		sum := sha256.Sum256([]byte(c.Spec))
		c.SpecSHA256 = hex.EncodeToString(sum[:])
	}
	if c.RateRule == "" {
		c.RateRule = RateRuleDecimal
	}
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO campaign (name, spec, spec_format, spec_sha256, order_seed, created, rate_rule)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`),
		c.Name, c.Spec, c.SpecFormat, c.SpecSHA256, c.ShuffleKey, c.Created.UTC(), c.RateRule)
	if err != nil {
		return Campaign{}, fmt.Errorf("storing campaign %s: %w", c.Name, err)
	}
	return s.GetCampaign(ctx, c.Name)
}

// GetCampaign returns a stored campaign.
func (s *Store) GetCampaign(ctx context.Context, name string) (Campaign, error) {
	var c Campaign
	err := s.db.QueryRowContext(ctx, s.q(`SELECT name, spec, spec_format, spec_sha256, order_seed, created, rate_rule FROM campaign WHERE name = ?`), name).
		Scan(&c.Name, &c.Spec, &c.SpecFormat, &c.SpecSHA256, &c.ShuffleKey, &c.Created, &c.RateRule)
	if err == sql.ErrNoRows {
		return c, fmt.Errorf("campaign %q: %w", name, ErrNotFound)
	}
	return c, err
}

// Campaigns lists the stored campaigns' names, oldest first.
func (s *Store) Campaigns(ctx context.Context) ([]string, error) {
	return s.names(ctx, `SELECT name FROM campaign ORDER BY created, name`)
}

// names runs a query of one text column and returns its values.
func (s *Store) names(ctx context.Context, query string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// PutRun stores a run with its axes, summary, intervals and host state,
// in one transaction. A run stored before under the same ID that has not
// finished (a failed attempt) is replaced, with its attempts counted; a
// finished one is kept and ErrFinished returned.
func (s *Store) PutRun(ctx context.Context, r *Run) error {
	return s.PutRunWith(ctx, r, nil)
}

// PutRunWith stores a run as PutRun does and, in the same transaction,
// does also (the schedule's record of the run's end, taskstore.Finish):
// one transaction a finished run where there were three. also runs when
// the run was stored finished before too (ErrFinished is still returned,
// after the commit).
func (s *Store) PutRunWith(ctx context.Context, r *Run, also func(ctx context.Context, tx *sql.Tx) error) error {
	if r.ID == "" || r.State == "" || r.Source == "" {
		return errors.New("a run needs an ID, a state and a source")
	}
	if r.Recorded.IsZero() {
		r.Recorded = time.Now()
	}
	if err := s.ensureRunPartition(ctx, r.Recorded); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.dialect == postgresDialect {
		// A partitioned run table keys on (id, recorded): this lock keeps
		// two writers of one ID from both inserting it.
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "run:"+r.ID); err != nil {
			return err
		}
	}
	var prevState string
	var prevAttempts int
	err = tx.QueryRowContext(ctx, s.q(`SELECT state, attempts FROM run WHERE id = ?`+s.forUpdate()), r.ID).Scan(&prevState, &prevAttempts)
	switch {
	case err == sql.ErrNoRows:
		if r.Attempts == 0 {
			r.Attempts = 1
		}
	case err != nil:
		return err
	case prevState == StateFinished:
		if also == nil {
			return fmt.Errorf("run %s: %w", r.ID, ErrFinished)
		}
		if err := also(ctx, tx); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		return fmt.Errorf("run %s: %w", r.ID, ErrFinished)
	default:
		r.Attempts = prevAttempts + 1
		if err := s.deleteRun(ctx, tx, r.ID); err != nil {
			return err
		}
	}
	if err := s.insertRun(ctx, tx, r); err != nil {
		return fmt.Errorf("storing run %s: %w", r.ID, err)
	}
	if also != nil {
		if err := also(ctx, tx); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (s *Store) forUpdate() string { return s.DB().ForUpdate() }

func (s *Store) deleteRun(ctx context.Context, tx *sql.Tx, id string) error {
	for _, t := range runChildTables {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM `+t+` WHERE run_id = ?`), id); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, s.q(`DELETE FROM run WHERE id = ?`), id)
	return err
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *Store) insertRun(ctx context.Context, tx *sql.Tx, r *Run) error {
	// No password is stored, whatever the caller passed: a command line
	// may carry --db with a DSN, an error may quote one.
	r.Cmdline, r.Error = RedactSecrets(r.Cmdline), RedactSecrets(r.Error)
	_, err := tx.ExecContext(ctx, s.q(`INSERT INTO run (id, campaign, point_key, rep, seq, state, error, attempts,
		source, source_file, source_sha256, tool_version, cmdline, local_host, remote_host, local_kernel, remote_kernel,
		started, ended, document, document_format, rounded, recorded)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		r.ID, nullString(r.Campaign), r.PointKey, r.Rep, r.Seq, r.State, r.Error, r.Attempts,
		r.Source, r.SourceFile, r.SourceSHA256, r.ToolVersion, r.Cmdline, r.LocalHost, r.RemoteHost, r.LocalKernel, r.RemoteKernel,
		nullTime(r.Started), nullTime(r.Ended), r.Document, r.DocumentFormat, boolInt(r.Rounded), r.Recorded.UTC())
	if err != nil {
		return err
	}
	for name, a := range r.Axes {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO run_axis (run_id, axis, num, label) VALUES (?, ?, ?, ?)`),
			r.ID, name, a.Num, a.Label); err != nil {
			return err
		}
	}
	m := r.Summary
	cols := `run_id, seconds, sent_bytes, received_bytes, sent_bps, received_bps,
		retransmits, min_rtt_ms, mean_rtt_ms, lost_percent, jitter_ms, rr_p50_us, rr_p99_us, out_of_order`
	args := []any{r.ID, m.Seconds, m.SentBytes, m.ReceivedBytes, m.SentBps, m.ReceivedBps,
		m.Retransmits, m.MinRTTms, m.MeanRTTms, m.LostPercent, m.JitterMs, m.RRp50us, m.RRp99us, m.OutOfOrder}
	// The probes' columns (migration 10) are named only for a probe's
	// run; every other run leaves them NULL, and its row is written as
	// before them (which the migrations' tests rely on, storing runs into
	// an older schema).
	if m.ProbeP50us != nil || m.ProbeP99us != nil {
		cols += `, probe_p50_us, probe_p99_us`
		args = append(args, m.ProbeP50us, m.ProbeP99us)
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO run_summary (`+cols+`) VALUES (`+placeholders(len(args))+`)`), args...); err != nil {
		return err
	}
	for name, v := range m.Figures {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO run_figure (run_id, name, value) VALUES (?, ?, ?)`), r.ID, name, v); err != nil {
			return err
		}
	}
	if len(r.Intervals) > 0 {
		stmt, err := tx.PrepareContext(ctx, s.q(`INSERT INTO run_interval (run_id, idx, stream, sender_role, t_start, t_end,
			bytes, received_bytes, bits_per_second, retransmits, snd_cwnd, rtt_us, packets, lost_packets, jitter_ms, omitted)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`))
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, iv := range r.Intervals {
			if _, err := stmt.ExecContext(ctx, r.ID, iv.Index, iv.Stream, iv.SenderRole, iv.Start, iv.End,
				iv.Bytes, iv.ReceivedBytes, iv.BitsPerSecond, iv.Retransmits, iv.SndCwnd, iv.RTTus,
				iv.Packets, iv.LostPackets, iv.JitterMs, boolInt(iv.Omitted)); err != nil {
				return err
			}
		}
	}
	for _, h := range r.Hosts {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO host_state (run_id, host, t, cpu_user, cpu_sys, cpu_softirq, mem_used)
			VALUES (?, ?, ?, ?, ?, ?, ?)`), r.ID, h.Host, h.T, h.CPUUser, h.CPUSys, h.CPUSoftIRQ, h.MemUsed); err != nil {
			return err
		}
	}
	for _, l := range r.Limits {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO host_limits (run_id, host, hostname, kernel, limits) VALUES (?, ?, ?, ?, ?)`),
			r.ID, l.Host, l.Hostname, l.Kernel, l.Limits); err != nil {
			return err
		}
	}
	return nil
}

// Filter picks runs for List. Zero fields pick everything.
type Filter struct {
	Campaign string
	Since    time.Time // runs started at or after
	Host     string    // local or remote host name contains this
	Source   string
	State    string
	IDPrefix string
}

func (s *Store) where(f Filter) (string, []any) {
	var conds []string
	var args []any
	if f.Campaign != "" {
		conds, args = append(conds, "r.campaign = ?"), append(args, f.Campaign)
	}
	if !f.Since.IsZero() {
		conds, args = append(conds, "r.started >= ?"), append(args, f.Since.UTC())
	}
	if f.Host != "" {
		conds, args = append(conds, "(r.local_host LIKE ? OR r.remote_host LIKE ?)"), append(args, "%"+f.Host+"%", "%"+f.Host+"%")
	}
	if f.Source != "" {
		conds, args = append(conds, "r.source = ?"), append(args, f.Source)
	}
	if f.State != "" {
		conds, args = append(conds, "r.state = ?"), append(args, f.State)
	}
	if f.IDPrefix != "" {
		conds, args = append(conds, "r.id LIKE ?"), append(args, f.IDPrefix+"%")
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

const runColumns = `r.id, r.campaign, r.point_key, r.rep, r.seq, r.state, r.error, r.attempts,
	r.source, r.source_file, r.source_sha256, r.tool_version, r.cmdline, r.local_host, r.remote_host,
	r.local_kernel, r.remote_kernel, r.started, r.ended, r.document_format, r.rounded, r.recorded,
	m.seconds, m.sent_bytes, m.received_bytes, m.sent_bps, m.received_bps, m.retransmits,
	m.min_rtt_ms, m.mean_rtt_ms, m.lost_percent, m.jitter_ms, m.rr_p50_us, m.rr_p99_us, m.out_of_order,
	m.probe_p50_us, m.probe_p99_us`

type scanner interface{ Scan(...any) error }

func scanRun(sc scanner) (*Run, error) {
	var r Run
	var campaign sql.NullString
	var started, ended sql.NullTime
	var rounded int
	m := &r.Summary
	err := sc.Scan(&r.ID, &campaign, &r.PointKey, &r.Rep, &r.Seq, &r.State, &r.Error, &r.Attempts,
		&r.Source, &r.SourceFile, &r.SourceSHA256, &r.ToolVersion, &r.Cmdline, &r.LocalHost, &r.RemoteHost,
		&r.LocalKernel, &r.RemoteKernel, &started, &ended, &r.DocumentFormat, &rounded, &r.Recorded,
		&m.Seconds, &m.SentBytes, &m.ReceivedBytes, &m.SentBps, &m.ReceivedBps, &m.Retransmits,
		&m.MinRTTms, &m.MeanRTTms, &m.LostPercent, &m.JitterMs, &m.RRp50us, &m.RRp99us, &m.OutOfOrder,
		&m.ProbeP50us, &m.ProbeP99us)
	if err != nil {
		return nil, err
	}
	r.Campaign = campaign.String
	r.Started, r.Ended = started.Time, ended.Time
	r.Rounded = rounded != 0
	r.Axes = map[string]Axis{}
	return &r, nil
}

// List returns the runs that f picks, with their axes and summaries but
// without documents, intervals or host state; in campaign order, then by
// start.
func (s *Store) List(ctx context.Context, f Filter) ([]*Run, error) {
	where, args := s.where(f)
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT `+runColumns+` FROM run r LEFT JOIN run_summary m ON m.run_id = r.id`+
		where+` ORDER BY r.started, r.campaign, r.seq, r.id`), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Run
	byID := map[string]*Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
		byID[r.ID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	arows, err := s.db.QueryContext(ctx, s.q(`SELECT a.run_id, a.axis, a.num, a.label FROM run_axis a JOIN run r ON r.id = a.run_id`+where), args...)
	if err != nil {
		return nil, err
	}
	defer arows.Close()
	for arows.Next() {
		var id, name string
		var a Axis
		if err := arows.Scan(&id, &name, &a.Num, &a.Label); err != nil {
			return nil, err
		}
		if r := byID[id]; r != nil {
			r.Axes[name] = a
		}
	}
	if err := arows.Err(); err != nil {
		return nil, err
	}
	frows, err := s.db.QueryContext(ctx, s.q(`SELECT f.run_id, f.name, f.value FROM run_figure f JOIN run r ON r.id = f.run_id`+where), args...)
	if err != nil {
		return nil, err
	}
	defer frows.Close()
	for frows.Next() {
		var id, name string
		var v float64
		if err := frows.Scan(&id, &name, &v); err != nil {
			return nil, err
		}
		if r := byID[id]; r != nil {
			if r.Summary.Figures == nil {
				r.Summary.Figures = map[string]float64{}
			}
			r.Summary.Figures[name] = v
		}
	}
	return out, frows.Err()
}

// States maps each stored run of a campaign to its state.
func (s *Store) States(ctx context.Context, campaign string) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, state FROM run WHERE campaign = ?`), campaign)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, st string
		if err := rows.Scan(&id, &st); err != nil {
			return nil, err
		}
		out[id] = st
	}
	return out, rows.Err()
}

// Get returns one run whole: a full ID or a unique prefix of one.
func (s *Store) Get(ctx context.Context, id string) (*Run, error) {
	runs, err := s.List(ctx, Filter{IDPrefix: id})
	if err != nil {
		return nil, err
	}
	var r *Run
	for _, c := range runs {
		if c.ID == id {
			r = c
		}
	}
	if r == nil {
		switch len(runs) {
		case 0:
			return nil, fmt.Errorf("run %q: %w", id, ErrNotFound)
		case 1:
			r = runs[0]
		default:
			return nil, fmt.Errorf("run %q: %d runs have this prefix; give more of the ID", id, len(runs))
		}
	}
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT document FROM run WHERE id = ?`), r.ID).Scan(&r.Document); err != nil {
		return nil, err
	}
	if err := s.loadIntervals(ctx, r); err != nil {
		return nil, err
	}
	if err := s.loadHosts(ctx, r); err != nil {
		return nil, err
	}
	return r, nil
}

func (s *Store) loadIntervals(ctx context.Context, r *Run) error {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT idx, stream, sender_role, t_start, t_end, bytes, received_bytes,
		bits_per_second, retransmits, snd_cwnd, rtt_us, packets, lost_packets, jitter_ms, omitted
		FROM run_interval WHERE run_id = ? ORDER BY idx, sender_role, CASE WHEN stream IS NULL THEN 1 ELSE 0 END, stream`), r.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var iv Interval
		var stream sql.NullInt64
		var omitted int
		if err := rows.Scan(&iv.Index, &stream, &iv.SenderRole, &iv.Start, &iv.End, &iv.Bytes, &iv.ReceivedBytes,
			&iv.BitsPerSecond, &iv.Retransmits, &iv.SndCwnd, &iv.RTTus, &iv.Packets, &iv.LostPackets, &iv.JitterMs, &omitted); err != nil {
			return err
		}
		if stream.Valid {
			n := int(stream.Int64)
			iv.Stream = &n
		}
		iv.Omitted = omitted != 0
		r.Intervals = append(r.Intervals, iv)
	}
	return rows.Err()
}

func (s *Store) loadHosts(ctx context.Context, r *Run) error {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT host, t, cpu_user, cpu_sys, cpu_softirq, mem_used FROM host_state WHERE run_id = ? ORDER BY host, t`), r.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var h HostSample
		if err := rows.Scan(&h.Host, &h.T, &h.CPUUser, &h.CPUSys, &h.CPUSoftIRQ, &h.MemUsed); err != nil {
			return err
		}
		r.Hosts = append(r.Hosts, h)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	lrows, err := s.db.QueryContext(ctx, s.q(`SELECT host, hostname, kernel, limits FROM host_limits WHERE run_id = ? ORDER BY host`), r.ID)
	if err != nil {
		return err
	}
	defer lrows.Close()
	for lrows.Next() {
		var l HostLimits
		if err := lrows.Scan(&l.Host, &l.Hostname, &l.Kernel, &l.Limits); err != nil {
			return err
		}
		r.Limits = append(r.Limits, l)
	}
	return lrows.Err()
}

// HasSHA256 reports the run imported from a file with this SHA-256, if any.
func (s *Store) HasSHA256(ctx context.Context, sum string) (string, bool, error) {
	var id string
	err := s.db.QueryRowContext(ctx, s.q(`SELECT id FROM run WHERE source_sha256 = ? LIMIT 1`), sum).Scan(&id)
	if err == sql.ErrNoRows {
		return "", false, nil
	}
	return id, err == nil, err
}
