package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/rr"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/udpmon"
)

// udpmonFlags are the udpmon command's flags.
type udpmonFlags struct {
	cfg            udpmon.Config
	port           int
	bind           string
	connectTimeout time.Duration
	sizes          string
	spacings       string
	csv            bool
	json           bool
	title          string
	logfile        string
	noBar          bool
	save           bool
	db             string
	campaign       string
	log            logOptions
	security       clientSecurity // --auth-key-file, --tls-ca, --tls-pin (security.go)
}

func newUDPMonFlags() *udpmonFlags {
	return &udpmonFlags{
		port: spec.DefaultPort, connectTimeout: spec.DefaultConnectTO,
		cfg: udpmon.Config{Count: udpmon.DefaultCount},
		// UDPmon's classic grid: full and small packets, 0 to 40 µs.
		sizes:    "64:1472:64",
		spacings: "0:40us:2us",
		log:      logOptions{level: "warn", format: "text"},
	}
}

func (f *udpmonFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	c := &f.cfg
	fs.IntVarP(&f.port, "port", "p", f.port, "server port")
	fs.StringVar(&f.sizes, "sizes", f.sizes, "UDP payload sizes in bytes: a list (512,1472) or START:END:STEP")
	fs.StringVar(&f.spacings, "spacing", f.spacings, "gaps between datagrams: a list (0,12us) or START:END:STEP (0:40us:1us); a bare number is µs; 0 sends as fast as possible")
	fs.Int64Var(&c.Count, "count", c.Count, "datagrams per point")
	fs.BoolVarP(&c.Reverse, "reverse", "R", false, "the server sends, the client receives")
	fs.VarP(flagvalue.Size(&c.Window), "window", "w", "socket buffers on both ends (e.g. 4K to see the receiving host drop); default: the receiver asks for 8 MiB")
	fs.BoolVar(&c.NoGSO, "no-gso", false, "no segmentation offload on send nor GRO on receive")
	fs.Var(flagvalue.TOS(&c.TOS), "tos", "IP type-of-service byte")
	fs.Var(flagvalue.Duration(&c.LateThreshold), "late-threshold", "a missing datagram counts as lost after this long (2s)")
	fs.Var(flagvalue.Duration(&c.PointTimeout), "point-timeout", "give up on a point after this long (default: twice its sending time plus 20s)")
	fs.StringVarP(&f.bind, "bind", "B", "", "local address for the client's sockets")
	fs.Var(flagvalue.Duration(&f.connectTimeout), "connect-timeout", "give up connecting after this long")
	fs.BoolVar(&f.csv, "csv", false, "CSV, one row per point")
	fs.BoolVarP(&f.json, "json", "J", false, "one JSON document: every point with both hosts' counters and its histograms")
	fs.BoolVar(&f.noBar, "no-progress", false, "no progress bar, even on a terminal")
	fs.BoolVar(&f.save, "save", false, "store the sweep (its -J document) in the archive (see --db) as one run")
	fs.StringVar(&f.campaign, "campaign", "", "with --save: store the sweep with this campaign's runs (it must exist)")
	dbFlag(cmd, &f.db)
	fs.StringVarP(&f.title, "title", "T", "", "prefix every table line with this title")
	fs.StringVar(&f.logfile, "logfile", "", "write the report to this file instead of stdout (appends)")
	fs.StringVar(&f.log.level, "log-level", f.log.level, "diagnostic log level on stderr: debug, info, warn, error")
	fs.StringVar(&f.log.format, "log-format", f.log.format, "diagnostic log format: text or json")
	f.security.register(fs)
}

func (f *udpmonFlags) finish() error {
	sizes, err := rr.ParseSizes(f.sizes)
	if err != nil {
		return usagef("--sizes %s: %v", f.sizes, err)
	}
	spacings, err := rr.ParseDurations(f.spacings)
	if err != nil {
		return usagef("--spacing %s: %v", f.spacings, err)
	}
	f.cfg.Sizes, f.cfg.Spacings = sizes, spacings
	if f.csv && f.json {
		return usagef("--csv and --json: choose one")
	}
	if f.cfg.Count < 1 {
		return usagef("--count %d: want at least 1", f.cfg.Count)
	}
	if f.port < 1 || f.port > 65535 {
		return usagef("-p %d: want 1 to 65535", f.port)
	}
	if f.connectTimeout <= 0 {
		return usagef("--connect-timeout: must be positive")
	}
	if err := f.cfg.Validate(); err != nil {
		return usageError{err}
	}
	return nil
}

func newUDPMonCmd(e env) *cobra.Command {
	f := newUDPMonFlags()
	cmd := &cobra.Command{
		Use:   "udpmon HOST",
		Short: "Sweep UDP payload size × inter-packet spacing against a wireperf server (UDPmon's method)",
		Long: `udpmon runs one paced UDP test per (size, spacing) point and tabulates, for each, the
achieved spacing, the wire rate sent and received, loss, re-ordering, jitter, relative
one-way delay, both hosts' CPU split and interrupts, and the UDP counters with a verdict
on where lost datagrams were dropped (docs/metrics.md, "UDPmon method").`,
		Example: `  wireperf udpmon host                                  sizes 64..1472, spacings 0..40 µs
  wireperf udpmon host --sizes 1472,512 --spacing 0:40us:1us --count 100000
  wireperf udpmon host --sizes 1472 --spacing 0 -w 4K  a tiny receive buffer: see who drops
  wireperf udpmon host --csv > sweep.csv                 for plotting`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("udpmon needs exactly one HOST (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.finish(); err != nil {
				return err
			}
			return runUDPMon(cmd.Context(), e, f, args[0])
		},
	}
	f.register(cmd)
	return cmd
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	file, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := file.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func runUDPMon(ctx context.Context, e env, f *udpmonFlags, host string) error {
	rio, err := startRun(ctx, e, f.log, f.logfile)
	if err != nil {
		return err
	}
	defer rio.done()
	log, out, ctx := rio.log, rio.out, rio.ctx
	if !f.save && (f.campaign != "" || f.db != "") {
		return usagef("--db and --campaign say where --save stores the sweep: give --save")
	}
	if f.save {
		// Before any traffic: the archive opens and the campaign is there.
		if err := checkArchiveFor(ctx, f.db, f.campaign); err != nil {
			return err
		}
	}
	client := session.ClientConfig{Host: host, Port: f.port, Bind: f.bind, ConnectTimeout: f.connectTimeout, Logger: log}
	if err := f.security.apply(&client); err != nil {
		return err
	}
	cfg := f.cfg
	cfg.Server, cfg.Logger = fmt.Sprintf("%s port %d", host, f.port), log
	cfg.Run = func(ctx context.Context, s spec.Spec) (*result.Result, error) {
		point := client
		point.Spec = s
		res, err := session.RunClient(ctx, point)
		// A refusal other than "busy" (a limit, a setting the server
		// cannot apply) would meet every point: the sweep stops.
		if errors.Is(err, session.ErrRefused) && !strings.Contains(err.Error(), "busy") {
			err = fmt.Errorf("%w (%w)", err, udpmon.ErrRecurs)
		}
		return res, err
	}
	table := f.csv == f.json // neither: the table, row by row
	bar := !f.noBar && isTerminal(out)
	tw := &emit.UDPMonTable{W: out, Opt: emit.Options{Title: f.title}}
	var werr error
	keep := func(err error) {
		if err != nil && werr == nil {
			werr = err
		}
	}
	total := len(cfg.Sizes) * len(cfg.Spacings)
	clearBar := func() {
		if bar {
			keep(write(out, "\r\033[K"))
		}
	}
	drawBar := func(done int, eta time.Duration) {
		if bar {
			keep(write(out, "\r"+udpmon.Bar(done, total, eta, 30)))
		}
	}
	// The table's header waits for the first point, so that a sweep that
	// cannot start (a wrong port) prints one line: why.
	headed := false
	header := func() {
		if table && !headed {
			keep(tw.Header(&udpmon.Sweep{Server: cfg.Server, Reverse: cfg.Reverse, Count: cfg.Count}))
		}
		headed = true
	}
	drawBar(0, 0)
	cfg.OnPoint = func(p *udpmon.Point, done, total int, eta time.Duration) {
		clearBar()
		header()
		if table {
			keep(tw.Row(p))
		}
		drawBar(done, eta)
	}
	sw, runErr := udpmon.Run(ctx, cfg)
	clearBar()
	if sw == nil || len(sw.Points) == 0 && runErr != nil {
		return runErr
	}
	header()
	switch {
	case f.json:
		keep((&emit.UDPMonJSON{W: out}).Write(sw))
	case f.csv:
		keep((&emit.UDPMonCSV{W: out}).Write(sw))
	default:
		keep(tw.Footer(sw))
	}
	if runErr == nil && werr != nil {
		runErr = fmt.Errorf("writing the report: %w", werr)
	}
	if runErr == nil && sw.Failed == len(sw.Points) {
		runErr = fmt.Errorf("every point failed: %s", sw.Points[0].Error)
	}
	if f.save {
		id, err := saveUDPMon(ctx, f.db, f.campaign, sw, runErr, os.Args)
		if err != nil {
			return fmt.Errorf("storing the sweep: %w", err)
		}
		fmt.Fprintf(e.stderr, "udpmon: stored as run %s\n", id)
	}
	return runErr
}

func write(w io.Writer, s string) error {
	_, err := io.WriteString(w, s)
	return err
}
