package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	"github.com/wireperf/wireperf/internal/units"
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
	// Every point's test must parse before anything runs.
	tests, err := campaign.Tests(spec, runs)
	if err != nil {
		return usageError{err}
	}
	// A run's length is its point's own, as its test's model tells it.
	length := campaign.Length(tests)
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
	sw := &sweeper{e: e, total: len(runs), rec: &campaign.Recorder{Spec: spec, Store: store, Tests: tests, Logger: rio.log,
		Notice: func(m string) { fmt.Fprintln(e.stderr, m) }}}
	fmt.Fprintf(e.stdout, "campaign %s: %s, %d to run, order %s (shuffle key %d), archive %s\n",
		spec.Name, units.Count(len(runs), "run"), len(todo), spec.Order, spec.ShuffleKey, store.DSN())
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
	x := campaign.Executor{Pause: spec.Pause, Recorder: sw.rec, Begin: func(r campaign.Run, _ int) { sw.current = r.Point.Label() }, Done: func(r campaign.Run, attempt int, rec *archive.Run, err error) {
		sw.done(r, attempt, rec, err)
		if bar != nil && (err == nil || attempt == 2) {
			bar.Increment()
		}
	}}
	out := x.Execute(rio.ctx, todo)
	if progress != nil {
		if out.Cancelled || bar.Current() < int64(len(todo)) {
			bar.Abort(false)
		}
		progress.Wait()
	}
	aborted := ""
	if out.Aborted > 0 {
		aborted = fmt.Sprintf(", %d aborted (interrupted)", out.Aborted)
	}
	fmt.Fprintf(e.stdout, "campaign %s: %d finished, %d failed%s, %d done before\n", spec.Name, out.Finished, len(out.Failed), aborted, len(runs)-len(todo))
	if out.Cancelled {
		return fmt.Errorf("interrupted: resume with wireperf sweep --resume %s", spec.Name)
	}
	if len(out.Failed) > 0 {
		return fmt.Errorf("%s failed twice (stored with their errors); resume with wireperf sweep --resume %s", units.Count(len(out.Failed), "run"), spec.Name)
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

func printPlan(w io.Writer, s *campaign.Spec, runs []campaign.Run, length func(campaign.Run) time.Duration) {
	for i, r := range runs {
		target := ""
		if len(s.Targets) > 1 {
			target = r.Point.Target + " "
		}
		fmt.Fprintf(w, "%4d  %s  %s%s  rep %d\n", i+1, r.ID, target, r.Point.Label(), r.Rep)
	}
	est := s.Estimate(runs, length, runOverhead)
	fmt.Fprintf(w, "%s, estimated %s (order %s, pause %s)\n", units.Count(len(runs), "run"), est.Round(time.Second), s.Order, s.Pause)
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

// sweeper runs one campaign run, stores it, and says how it went.
type sweeper struct {
	e       env
	rec     *campaign.Recorder
	total   int
	current string
	lines   io.Writer // the progress bar's writer, which prints above the bar
}

func (s *sweeper) println(format string, args ...any) {
	w := s.e.stdout
	if s.lines != nil {
		w = s.lines
	}
	fmt.Fprintf(w, format+"\n", args...)
}

// done says how a run went.
func (s *sweeper) done(r campaign.Run, attempt int, rec *archive.Run, runErr error) {
	if rec == nil {
		s.println("%v", runErr)
		return
	}
	retry := ""
	if attempt > 1 {
		retry = " (retry)"
	}
	head := fmt.Sprintf("[%d/%d] %s %s rep %d%s", r.Seq+1, s.total, r.ID[:8], r.Point.Label(), r.Rep, retry)
	if runErr != nil {
		s.println("%s: %s: %s", head, rec.State, rec.Error)
		return
	}
	s.println("%s: %s", head, rec.Summary.Line())
}
