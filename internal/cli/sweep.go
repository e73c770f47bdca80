package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/campaign"
	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testdef"
	"github.com/wireperf/wireperf/internal/testrun"
	"github.com/wireperf/wireperf/internal/units"
	"github.com/wireperf/wireperf/internal/version"
)

// sweepFlags are the sweep command's own flags; the axes are comma lists
// under the client's flag names.
type sweepFlags struct {
	axes       map[string]*string
	udp        bool
	reverse    bool
	bidir      bool
	port       int
	name       string
	repeat     int
	order      string
	shuffleKey int64
	pause      time.Duration
	count      int64
	rr         bool
	file       string
	dryRun     bool
	resume     string
	db         string
	quiet      bool
	log        logOptions
	progress   bool // set by the command: stdout is a terminal and not --quiet
}

// sweepAxisFlags are the axes' flags: long name, short name, what a value is.
var sweepAxisFlags = []struct{ name, short, help string }{
	{campaign.AxisWindow, "w", "socket buffers, e.g. 64K,1M,16M"},
	{campaign.AxisParallel, "P", "parallel streams, e.g. 1,4,16"},
	{campaign.AxisTime, "t", "test lengths, e.g. 10s,60s"},
	{campaign.AxisLength, "l", "bytes per write, e.g. 64,512,1472"},
	{campaign.AxisBitrate, "b", "rates per stream, e.g. 100m,1g"},
	{campaign.AxisSpacing, "", "UDP gaps between datagrams, e.g. 0,10us,20us"},
	{campaign.AxisCongestion, "C", "congestion control algorithms, e.g. cubic,bbr"},
	{campaign.AxisSetMSS, "M", "TCP maximum segment sizes"},
	{campaign.AxisDirection, "", "up (client sends), down (-R) or bidir"},
	{campaign.AxisProto, "", "tcp or udp"},
}

func newSweepCmd(e env) *cobra.Command {
	f := &sweepFlags{axes: map[string]*string{}, log: logOptions{level: "warn", format: "text"}}
	cmd := &cobra.Command{
		Use:   "sweep [HOST] [--AXIS LIST]... [-- CLIENT-FLAGS]",
		Short: "Run a campaign: the cross-product of axes, repeated, stored in the archive",
		Long: `sweep runs a campaign of client tests: every combination of the axes given, each a
comma list, repeated, in a shuffled order whose key is recorded. Every run is stored in the
archive (--db) under an ID made from the campaign, the point and the repetition, so that
--resume NAME runs only what is missing. Client flags after -- apply to every run.
See docs/campaigns.md for the file form (-f).`,
		Example: `  wireperf sweep host --window 64K,1M,16M -P 1,4,16 -t 10s,60s --repeat 3 --name grid
  wireperf sweep host -u -l 64,512,1472 --spacing 0,10us,20us --name udpmon -- -i 0
  wireperf sweep -f examples/windows-streams.yaml --dry-run
  wireperf sweep --resume grid`,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.progress = !f.quiet && isTerminal(e.stdout)
			return runSweep(cmd, e, f, args)
		},
	}
	fs := cmd.Flags()
	f.registerSpec(fs)
	fs.StringVarP(&f.file, "file", "f", "", "read the campaign from this YAML file")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the plan and its estimated time; run nothing")
	fs.StringVar(&f.resume, "resume", "", "resume the stored campaign NAME: run only what is missing")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar (the result lines still print)")
	dbFlag(cmd, &f.db)
	fs.StringVar(&f.log.level, "log-level", f.log.level, "diagnostic log level on stderr: debug, info, warn, error")
	return cmd
}

// registerSpec registers the flags that say what a campaign is (not
// where or how it runs): the axes and the campaign's settings.
func (f *sweepFlags) registerSpec(fs *pflag.FlagSet) {
	for _, a := range sweepAxisFlags {
		p := new(string)
		f.axes[a.name] = p
		fs.StringVarP(p, a.name, a.short, "", a.help)
	}
	fs.BoolVarP(&f.udp, "udp", "u", false, "UDP tests (as --proto udp)")
	fs.BoolVarP(&f.reverse, "reverse", "R", false, "the server sends (as --direction down)")
	fs.BoolVar(&f.bidir, "bidir", false, "both ends send (as --direction bidir)")
	fs.IntVarP(&f.port, "port", "p", 0, "server port (default 5201)")
	fs.StringVar(&f.name, "name", "", "the campaign's name (required; resume with --resume NAME)")
	fs.IntVar(&f.repeat, "repeat", 1, "runs per point")
	fs.StringVar(&f.order, "order", campaign.OrderShuffle, "shuffle (in an order recorded with the campaign) or sequential")
	fs.Int64Var(&f.shuffleKey, "shuffle-key", 0, "the number that fixes the shuffle's order (default: chosen and recorded)")
	fs.Var(flagvalue.Duration(&f.pause), "pause", "pause between runs, e.g. 5s")
	fs.Int64Var(&f.count, "count", 0, "UDPmon sweeps: datagrams per run (with -u, -l and --spacing axes)")
	fs.BoolVar(&f.rr, "rr", false, "each run is a request-response test (wireperf rr); --length is the request size")
}

// storedFlags is the flags form of a campaign as stored: the arguments
// that made it, so that --resume plans exactly the same runs.
type storedFlags struct {
	Args []string `json:"args"`
}

func runSweep(cmd *cobra.Command, e env, f *sweepFlags, args []string) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	var store *archive.Store
	openStore := func() error {
		if store != nil {
			return nil
		}
		s, err := openArchive(ctx, f.db)
		store = s
		return err
	}
	defer func() {
		if store != nil {
			store.Close()
		}
	}()

	var spec *campaign.Spec
	var text, format string
	var err error
	switch {
	case f.resume != "":
		if f.file != "" || len(args) > 0 {
			return usagef("--resume takes the campaign from the archive: give no HOST or -f")
		}
		if changed := specFlagsChanged(cmd.Flags()); changed != "" {
			return usagef("--%s: --resume runs the campaign as it was stored", changed)
		}
		if err := openStore(); err != nil {
			return err
		}
		c, err := store.GetCampaign(ctx, f.resume)
		if errors.Is(err, archive.ErrNotFound) {
			names, _ := store.Campaigns(ctx)
			return usagef("no campaign %q in %s (campaigns: %s)", f.resume, store.DSN(), strings.Join(names, ", "))
		}
		if err != nil {
			return err
		}
		spec, err = specFromStored(c)
		if err != nil {
			return fmt.Errorf("campaign %s: the stored spec: %w", c.Name, err)
		}
		spec.ShuffleKey = c.ShuffleKey
		text, format = c.Spec, c.SpecFormat
	case f.file != "":
		if changed := specFlagsChanged(cmd.Flags()); changed != "" {
			return usagef("--%s: the campaign comes from %s; set it there", changed, f.file)
		}
		data, err := readFileAtMost(f.file, campaign.MaxFileSize)
		if err != nil {
			return usagef("%v", err)
		}
		spec, err = campaign.ParseFile(f.file, data)
		if err != nil {
			return usageError{err}
		}
		if len(args) > 0 {
			return usagef("-f takes the target from the file: give no HOST")
		}
		text, format = string(data), "yaml"
	default:
		spec, err = specFromFlags(cmd.Flags(), f, args, cmd.ArgsLenAtDash())
		if err != nil {
			return err
		}
		stored, _ := json.Marshal(storedFlags{Args: canonicalArgs(cmd.Flags(), args, cmd.ArgsLenAtDash())})
		text, format = string(stored), "flags"
	}
	runs := spec.Plan()
	// Every point's client flags must parse before anything runs.
	points := map[string]pointTest{}
	for _, r := range runs {
		if _, ok := points[r.Point.Key()]; ok {
			continue
		}
		pt, err := newPointTest(spec, r.Point)
		if err != nil {
			return usagef("point %s: %v", r.Point.Label(), err)
		}
		points[r.Point.Key()] = pt
	}
	// A run's length is its point's own: -t (an axis or fixed) with -O.
	length := func(r campaign.Run) time.Duration { return points[r.Point.Key()].duration() }
	if f.dryRun && f.resume == "" {
		if spec.Order == campaign.OrderShuffle && spec.ShuffleKey == 0 {
			fmt.Fprintln(e.stdout, "(the order shown is one shuffle; a real run picks and records its own shuffle key)")
		}
		printPlan(e.stdout, spec, runs, length)
		return nil
	}
	if err := openStore(); err != nil {
		return err
	}
	if spec.ShuffleKey == 0 {
		spec.ShuffleKey = campaign.NewShuffleKey()
	}
	stored, err := store.PutCampaign(ctx, archive.Campaign{Name: spec.Name, Spec: text, SpecFormat: format, ShuffleKey: spec.ShuffleKey})
	if err != nil {
		return err
	}
	if stored.Spec != text || stored.SpecFormat != format {
		return usagef("campaign %q is already stored with another spec: choose another --name, or --resume %s", spec.Name, spec.Name)
	}
	// Planned again with the key that is recorded, so that the order run
	// is the order a resume, or anyone reading the archive, recomputes.
	spec.ShuffleKey = stored.ShuffleKey
	runs = spec.Plan()
	rio, err := startRun(ctx, e, f.log, "")
	if err != nil {
		return err
	}
	defer rio.done()
	if !f.dryRun {
		// Held before the runs still missing are read, so that no other
		// sweep runs them meanwhile.
		release, err := holdCampaign(ctx, store, spec.Name, rio.log)
		if err != nil {
			return err
		}
		defer release()
	}
	states, err := store.States(ctx, spec.Name)
	if err != nil {
		return err
	}
	todo := campaign.Missing(runs, func(id string) bool { return states[id] == archive.StateFinished })
	if f.dryRun {
		fmt.Fprintf(e.stdout, "%d of %d runs done; left:\n", len(runs)-len(todo), len(runs))
		printPlan(e.stdout, spec, todo, length)
		return nil
	}
	sw := &sweeper{e: e, f: f, spec: spec, store: store, points: points, total: len(runs), log: rio}
	fmt.Fprintf(e.stdout, "campaign %s: %d runs, %d to run, order %s (shuffle key %d), archive %s\n",
		spec.Name, len(runs), len(todo), spec.Order, spec.ShuffleKey, store.DSN())
	var bar *mpb.Bar
	var progress *mpb.Progress
	if f.progress && len(todo) > 0 {
		progress = mpb.NewWithContext(rio.ctx, mpb.WithOutput(e.stdout), mpb.WithWidth(40))
		bar = progress.AddBar(int64(len(todo)),
			mpb.PrependDecorators(decor.Name(spec.Name+" "), decor.CountersNoUnit("%d/%d"), decor.Any(func(decor.Statistics) string { return " " + sw.current })),
			mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO), decor.Any(func(st decor.Statistics) string {
				// The plan knows each run's length, so the time left is
				// the estimate of the runs not yet done.
				done := int(st.Current)
				if done > len(todo) {
					done = len(todo)
				}
				return " ETA " + spec.Estimate(todo[done:], length, runOverhead).Round(time.Second).String()
			})))
		sw.lines = progress
	}
	x := campaign.Executor{Pause: spec.Pause, Run: func(ctx context.Context, r campaign.Run, attempt int) error {
		err := sw.run(ctx, r, attempt)
		if bar != nil && (err == nil || attempt == 2) {
			bar.Increment()
		}
		return err
	}}
	out := x.Execute(rio.ctx, todo)
	if progress != nil {
		if out.Cancelled || bar.Current() < int64(len(todo)) {
			bar.Abort(false)
		}
		progress.Wait()
	}
	fmt.Fprintf(e.stdout, "campaign %s: %d finished, %d failed, %d done before\n", spec.Name, out.Finished, len(out.Failed), len(runs)-len(todo))
	if out.Cancelled {
		return fmt.Errorf("interrupted: resume with wireperf sweep --resume %s", spec.Name)
	}
	if len(out.Failed) > 0 {
		return fmt.Errorf("%d runs failed twice (stored with their errors); resume with wireperf sweep --resume %s", len(out.Failed), spec.Name)
	}
	return nil
}

// specFlagsChanged names a flag that says what the campaign is, if one
// was given (they conflict with -f and --resume).
func specFlagsChanged(fs *pflag.FlagSet) string {
	probe := pflag.NewFlagSet("probe", pflag.ContinueOnError)
	(&sweepFlags{axes: map[string]*string{}}).registerSpec(probe)
	name := ""
	probe.VisitAll(func(fl *pflag.Flag) {
		if name == "" && fs.Changed(fl.Name) {
			name = fl.Name
		}
	})
	return name
}

// specFromFlags builds the campaign from the command line.
func specFromFlags(fs *pflag.FlagSet, f *sweepFlags, args []string, dash int) (*campaign.Spec, error) {
	hosts, fixed := args, []string(nil)
	if dash >= 0 {
		hosts, fixed = args[:dash], args[dash:]
	}
	if len(hosts) != 1 {
		return nil, usagef("sweep needs one HOST (or -f FILE, or --resume NAME); got %d", len(hosts))
	}
	if f.name == "" {
		return nil, usagef("sweep needs --name: the campaign's name, to find and resume it")
	}
	s := &campaign.Spec{Name: f.name, Targets: hosts, Port: f.port, Fixed: fixed, Repeat: f.repeat, Order: f.order, ShuffleKey: f.shuffleKey, Pause: f.pause, Count: f.count}
	if f.rr {
		s.Test = campaign.TestRR
	}
	for _, a := range sweepAxisFlags {
		if !fs.Changed(a.name) {
			continue
		}
		vals, err := campaign.ParseList(a.name, *f.axes[a.name])
		if err != nil {
			return nil, usagef("--%s: %v", a.name, err)
		}
		s.Axes = append(s.Axes, campaign.AxisValues{Name: a.name, Values: vals})
	}
	fixedAxis := func(flag, axis, value string) error {
		if fs.Changed(axis) {
			return usagef("--%s and --%s: choose one", flag, axis)
		}
		v, _ := campaign.ParseValue(axis, value)
		s.Axes = append(s.Axes, campaign.AxisValues{Name: axis, Values: []campaign.Value{v}})
		return nil
	}
	if f.udp {
		if err := fixedAxis("udp", campaign.AxisProto, "udp"); err != nil {
			return nil, err
		}
	}
	if f.reverse && f.bidir {
		return nil, usagef("-R and --bidir: choose one")
	}
	if f.reverse {
		if err := fixedAxis("reverse", campaign.AxisDirection, "down"); err != nil {
			return nil, err
		}
	}
	if f.bidir {
		if err := fixedAxis("bidir", campaign.AxisDirection, "bidir"); err != nil {
			return nil, err
		}
	}
	if err := s.Validate(); err != nil {
		return nil, usageError{err}
	}
	return s, nil
}

// canonicalArgs is the command line that made a flags-form campaign, in a
// stable form: every flag set, HOST, then -- and the client flags.
func canonicalArgs(fs *pflag.FlagSet, args []string, dash int) []string {
	var out []string
	fs.Visit(func(fl *pflag.Flag) {
		switch fl.Name {
		case "db", "dry-run", "quiet", "log-level", "resume":
			return // where and how it runs, not what
		}
		out = append(out, "--"+fl.Name+"="+fl.Value.String())
	})
	hosts, fixed := args, []string(nil)
	if dash >= 0 {
		hosts, fixed = args[:dash], args[dash:]
	}
	out = append(out, hosts...)
	if len(fixed) > 0 {
		out = append(append(out, "--"), fixed...)
	}
	return out
}

// specFromStored rebuilds a stored campaign's spec.
func specFromStored(c archive.Campaign) (*campaign.Spec, error) {
	if c.SpecFormat == "yaml" {
		return campaign.ParseFile(c.Name+".yaml", []byte(c.Spec))
	}
	var sf storedFlags
	if err := json.Unmarshal([]byte(c.Spec), &sf); err != nil {
		return nil, err
	}
	f, fs := &sweepFlags{axes: map[string]*string{}}, pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	f.registerSpec(fs)
	if err := fs.Parse(sf.Args); err != nil {
		return nil, err
	}
	return specFromFlags(fs, f, fs.Args(), fs.ArgsLenAtDash())
}

// pointTest is one point's test, its flags parsed and checked (package
// testdef) before the campaign starts.
type pointTest struct{ t testdef.Test }

// duration is how long the point's test runs, as its model says; a test
// whose length its flags don't tell (-n as fast as the path allows)
// counts as 0 in the plan's estimate.
func (p pointTest) duration() time.Duration {
	d, _ := p.t.Duration()
	return d
}

// run runs the test once and returns its -J document.
func (p pointTest) run(ctx context.Context, host string, log *slog.Logger, notice func(string)) ([]byte, error) {
	return testrun.JSON(ctx, p.t, host, testrun.Options{Logger: log, Notice: notice})
}

func newPointTest(s *campaign.Spec, p campaign.Point) (pointTest, error) {
	if s.Test == campaign.TestRR {
		return rrPointTest(s, p)
	}
	return clientPointTest(s, p)
}

// commandLineOnly names the first of flags (a command line's own, which
// a sweep sets itself) among args.
func commandLineOnly(args []string, flags ...string) (string, bool) {
	for _, a := range args {
		for _, f := range flags {
			if a == "--"+f || strings.HasPrefix(a, "--"+f+"=") {
				return f, true
			}
		}
	}
	return "", false
}

// parsePoint reads a point's flags into a test of kind; finish runs
// between the parse and the model's checks.
func parsePoint(kind testdef.Kind, args []string, between func(testdef.Test, *pflag.FlagSet) error) (testdef.Test, error) {
	fs := testdef.NewFlagSet(string(kind))
	t, err := testdef.New(kind, fs)
	if err != nil {
		return t, err
	}
	if err := fs.Parse(args); err != nil {
		return t, err
	}
	if fs.NArg() > 0 {
		return t, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := between(t, fs); err != nil {
		return t, err
	}
	return t, t.Finish(fs)
}

// rrPointTest reads a point as the rr command does: the length axis is
// the request size (--sizes), proto picks --udp or --tcp.
func rrPointTest(s *campaign.Spec, p campaign.Point) (pointTest, error) {
	var args []string
	for _, a := range p.Args(s.Fixed) {
		switch {
		case strings.HasPrefix(a, "--length="):
			a = "--sizes=" + strings.TrimPrefix(a, "--length=")
		case a == "--reverse" || a == "--bidir":
			return pointTest{}, fmt.Errorf("%s does not apply to request-response tests", a)
		}
		args = append(args, a)
	}
	if v, ok := p.Value(campaign.AxisProto); ok && v.Label == "tcp" {
		args = append(args, "--tcp") // udp is rr's default, and its own flag
	}
	if s.Port != 0 {
		args = append([]string{fmt.Sprintf("--port=%d", s.Port)}, args...)
	}
	if _, ok := commandLineOnly(args, "logfile"); ok {
		return pointTest{}, errors.New("a sweep of rr tests stores each run's JSON itself: give no -J, --logfile or --load")
	}
	t, err := parsePoint(testdef.KindRR, args, func(t testdef.Test, _ *pflag.FlagSet) error {
		if t.RR.JSON || t.RR.Load != "" {
			return errors.New("a sweep of rr tests stores each run's JSON itself: give no -J, --logfile or --load")
		}
		return nil
	})
	if err != nil {
		return pointTest{}, err
	}
	t.RR.Spec.HostCounters = true
	return pointTest{t}, nil
}

// clientPointTest reads a point's client flags as the client command
// does, so that a sweep run is exactly the client test it names.
func clientPointTest(s *campaign.Spec, p campaign.Point) (pointTest, error) {
	args := p.Args(s.Fixed)
	if s.Port != 0 {
		args = append([]string{fmt.Sprintf("--port=%d", s.Port)}, args...)
	}
	if _, ok := commandLineOnly(args, "save", "db"); ok {
		return pointTest{}, errors.New("a sweep stores every run in its own --db: give no --save or --db among a run's flags")
	}
	if _, ok := commandLineOnly(args, "logfile"); ok {
		return pointTest{}, errors.New("a sweep stores each run's JSON itself: give no -J, --json-stream or --logfile")
	}
	t, err := parsePoint(testdef.KindClient, args, func(t testdef.Test, fs *pflag.FlagSet) error {
		c := t.Client
		if c.JSON || c.JSONStream {
			return errors.New("a sweep stores each run's JSON itself: give no -J, --json-stream or --logfile")
		}
		if s.Count <= 0 {
			return nil
		}
		// UDPmon's method: a fixed number of datagrams at a fixed gap,
		// however long they take (-n, no -t).
		if fs.Changed("time") || fs.Changed("bytes") {
			return errors.New("--count sets the bytes of each run: give no -t or -n")
		}
		if !c.UDP {
			return errors.New("--count is for UDP sweeps (-u)")
		}
		length := c.Length
		if !fs.Changed("length") {
			length = int64(spec.DefaultUDPLength)
		}
		return fs.Set("bytes", strconv.FormatInt(s.Count*length, 10))
	})
	if err != nil {
		return pointTest{}, err
	}
	t.Client.Spec.HostCounters = true // both hosts' CPU split, kept beside the run
	return pointTest{t}, nil
}

// clientCmdline is the client command that a point runs.
func clientCmdline(s *campaign.Spec, p campaign.Point) string {
	args := append([]string{"wireperf", "client", p.Target}, p.Args(s.Fixed)...)
	if s.Port != 0 {
		args = append(args, fmt.Sprintf("--port=%d", s.Port))
	}
	return strings.Join(args, " ")
}

func printPlan(w io.Writer, s *campaign.Spec, runs []campaign.Run, length func(campaign.Run) time.Duration) {
	for i, r := range runs {
		target := ""
		if len(s.Targets) > 1 {
			target = r.Point.Target + " "
		}
		fmt.Fprintf(w, "%4d  %s  %s%s  rep %d\n", i+1, r.ID, target, r.Point.Label(), r.Rep)
	}
	est := s.Estimate(runs, length, runOverhead)
	fmt.Fprintf(w, "%d runs, estimated %s (order %s, pause %s)\n", len(runs), est.Round(time.Second), s.Order, s.Pause)
	// Windows above this host's limits measure the limit; the server's
	// limits are known only once a run reports them (table says then).
	if l, _ := hostmon.ReadLimits(); l.RmemMax > 0 || l.WmemMax > 0 {
		for _, note := range campaign.SameWindows(s.Windows(), l.RmemMax, l.WmemMax) {
			fmt.Fprintf(w, "NOTE on this host: %s\n", note)
		}
	}
}

// runOverhead is the time a run takes beyond its test: connecting, the
// server's report, storing.
const runOverhead = time.Second

// sweeper runs one campaign run and stores it.
type sweeper struct {
	e       env
	f       *sweepFlags
	spec    *campaign.Spec
	store   *archive.Store
	points  map[string]pointTest
	total   int
	current string
	lines   io.Writer // the progress bar's writer, which prints above the bar
	log     *runIO
}

func (s *sweeper) println(format string, args ...any) {
	w := s.e.stdout
	if s.lines != nil {
		w = s.lines
	}
	fmt.Fprintf(w, format+"\n", args...)
}

func (s *sweeper) run(ctx context.Context, r campaign.Run, attempt int) error {
	s.current = r.Point.Label()
	rec := &archive.Run{
		ID: r.ID, Campaign: s.spec.Name, PointKey: r.Point.Key(), Rep: r.Rep, Seq: r.Seq,
		Source: archive.SourceNative, ToolVersion: version.String(), Cmdline: clientCmdline(s.spec, r.Point),
		RemoteHost: r.Point.Target, Started: time.Now(), Axes: map[string]archive.Axis{},
	}
	for _, st := range r.Point.Settings {
		rec.Axes[st.Axis] = archive.Axis{Num: st.Value.Num, Label: st.Value.Label}
	}
	doc, runErr := s.points[r.Point.Key()].run(ctx, r.Point.Target, s.log.log, func(m string) { fmt.Fprintln(s.e.stderr, m) })
	rec.Ended = time.Now()
	if len(doc) > 0 {
		rec.Document, rec.DocumentFormat = doc, archive.FormatJSON
		if p, err := archive.ParseDocument(doc); err == nil {
			rec.Summary, rec.Intervals, rec.Hosts, rec.Limits = p.Summary, p.Intervals, p.Hosts, p.Limits
			rec.LocalHost, rec.LocalKernel, rec.RemoteKernel = p.LocalHost, p.LocalKernel, p.RemoteKernel
			if !p.Started.IsZero() {
				rec.Started = p.Started
			}
			if runErr == nil && p.Error != "" {
				runErr = errors.New(p.Error)
			}
		}
	}
	rec.State = archive.StateFinished
	switch {
	case ctx.Err() != nil:
		// A test cut short by Ctrl-C may still end "cleanly" with a
		// partial report: it is not a finished run, and resume runs it.
		rec.State, rec.Error = archive.StateAborted, "interrupted"
		if runErr == nil {
			runErr = ctx.Err()
		}
	case runErr != nil:
		rec.State, rec.Error = archive.StateFailed, oneLine(runErr)
	}
	// Store with a context of its own: an interrupted run is still recorded.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := s.store.PutRun(sctx, rec); err != nil {
		s.println("%s: not stored: %v", r.ID, err)
		return err
	}
	retry := ""
	if attempt > 1 {
		retry = " (retry)"
	}
	head := fmt.Sprintf("[%d/%d] %s %s rep %d%s", r.Seq+1, s.total, r.ID[:8], r.Point.Label(), r.Rep, retry)
	if runErr != nil {
		s.println("%s: %s: %s", head, rec.State, rec.Error)
		return runErr
	}
	s.println("%s: %s", head, resultLine(rec.Summary))
	return nil
}

// resultLine is one run's result in iperf's units.
func resultLine(m archive.Summary) string {
	var parts []string
	if m.ReceivedBps != nil {
		parts = append(parts, strings.TrimSpace(units.FormatRate(*m.ReceivedBps, 'a'))+" received")
	} else if m.SentBps != nil {
		parts = append(parts, strings.TrimSpace(units.FormatRate(*m.SentBps, 'a'))+" sent")
	}
	if m.RRp50us != nil && m.RRp99us != nil {
		parts = append(parts, fmt.Sprintf("RTT p50 %.1f us, p99 %.1f us", *m.RRp50us, *m.RRp99us))
	}
	if m.Retransmits != nil {
		parts = append(parts, fmt.Sprintf("%d retransmits", *m.Retransmits))
	}
	if m.LostPercent != nil {
		parts = append(parts, fmt.Sprintf("%.3g%% lost", *m.LostPercent))
	}
	if m.JitterMs != nil {
		parts = append(parts, fmt.Sprintf("jitter %.3f ms", *m.JitterMs))
	}
	if len(parts) == 0 {
		return "finished"
	}
	return strings.Join(parts, ", ")
}
