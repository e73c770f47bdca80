// Package serverflags is the server command's flags: where it listens,
// the limits on the tests it admits, its keys, TLS and agent
// (authflags), how long a shutdown waits, and each test's report (-i,
// -J); with their defaults and checks, and the server they describe.
package serverflags

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/auth/authflags"
	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/units"
)

// Flags are the server command's flags but the command line's own (the
// log, --logfile, --pidfile).
type Flags struct {
	Config   server.Config
	Interval time.Duration // -i: the length of each test's report rows, 0 for none
	JSON     bool          // -J: each test's report as one JSON line
	// Format is -f: the unit of each test's text report, and of the
	// report a client's --get-server-output gets when it names none.
	Format units.Format
	Auth   authflags.Server
	Agent  authflags.Agent
	// UDP is -u and SSMHost -H: iperf 2's multicast receiver
	// (multicast.go).
	UDP     bool
	SSMHost string
	// Iperf3Auth is iperf3's credentials for iperf3 clients
	// (--rsa-private-key-path, --authorized-users-path).
	Iperf3Auth authflags.Iperf3Server
	// Daemon is -D: serve in the background (detach.go).
	Daemon bool
}

// New returns the flags at their defaults.
func New() *Flags {
	return &Flags{
		Config:   server.Config{Port: spec.DefaultPort, Limits: server.DefaultLimits(), ShutdownGrace: server.DefaultShutdownGrace},
		Interval: time.Second,
		Format:   units.AdaptiveBits,
	}
}

// Register adds the flags to fs.
func (f *Flags) Register(fs *pflag.FlagSet) {
	cfg := &f.Config
	fs.IntVarP(&cfg.Port, "port", "p", cfg.Port, "port to listen on")
	fs.StringVarP(&cfg.Bind, "bind", "B", "", "address to listen on (default: every address, IPv4 and IPv6)")
	fs.BoolVarP(&cfg.Once, "once", "1", false, "serve one test, then exit")
	fs.BoolVarP(&f.Daemon, "daemon", "D", false, "serve in the background: return once the server listens (or print why it could not), its output to --logfile (else discarded); Unix")
	fs.BoolVarP(&cfg.MPTCP, "mptcp", "m", false, "accept MPTCP data connections (Linux; accepted by default unless GODEBUG=multipathtcp=0 or 3); TCP ones are accepted as well")
	fs.IntVar(&cfg.Limits.MaxTests, "max-tests", cfg.Limits.MaxTests, "tests running at once, over all clients (0: no limit)")
	fs.IntVar(&cfg.Limits.MaxTestsPerClient, "max-tests-per-client", cfg.Limits.MaxTestsPerClient, "tests running at once from one client prefix (see --client-prefix-v4, -v6; 0: no limit)")
	fs.IntVar(&cfg.Limits.MaxStreams, "max-streams", cfg.Limits.MaxStreams, "data connections of one test (0: no limit)")
	fs.Var(flagvalue.Size(&cfg.Limits.MaxTestMemory), "max-test-memory", "what one test holds: data connections × -l, and the interval rows kept (at most 65,536 stream rows of 512 bytes) (0: no limit)")
	fs.Var(flagvalue.Duration(&cfg.Limits.MinKeylessInterval), "min-keyless-interval", "shortest -i admitted from a client without a key (every iperf3 client, and every client of a server without keys); 0: the client's own floor")
	fs.Var(flagvalue.Duration(&cfg.Limits.MaxDuration), "max-duration", "longest test admitted, e.g. 1h (0: no limit)")
	fs.Var(bitrateLimit{&cfg.Limits.BitrateLimit, &cfg.Limits.BitrateWindow}, "server-bitrate-limit", "end a test whose streams together move more than RATE bit/s (sent and received) on average over the last SECONDS (5 unless given), and refuse one whose -b × streams asks for more, as iperf3's (0: no limit)")
	fs.Var(bitrateLimit{&cfg.Limits.TotalBitrateLimit, &cfg.Limits.TotalBitrateWindow}, "server-total-bitrate-limit", "all tests together: refuse a test while the running ones and its -b × streams pass RATE over the last SECONDS (5 unless given), and end the newest test once they pass it for a whole window (0: no limit)")
	fs.Var(flagvalue.Size(&cfg.Limits.ClientDailyBytes), "client-daily-bytes", "bytes one client prefix may move in a UTC day, both ways over all its tests: past them its test is ended and new ones refused until 00:00 UTC, e.g. 50G (0: no limit)")
	// iperf3 3.21's name for the same limit, so that its servers' command
	// lines run as they are.
	fs.Var(flagvalue.Duration(&cfg.Limits.MaxDuration), "server-max-duration", "iperf3's name for --max-duration: seconds, or a duration such as 1h")
	fs.Var(flagvalue.Size(&cfg.Limits.MaxMemory), "max-memory", "data buffers and kept rows of all running tests together; a quarter of this machine's memory unless set (0: no limit)")
	fs.IntVar(&cfg.Limits.MaxTotalStreams, "max-total-streams", cfg.Limits.MaxTotalStreams, "data connections of all running tests together (0: no limit)")
	fs.IntVar(&cfg.Limits.MaxHandshakes, "max-handshakes", cfg.Limits.MaxHandshakes, "connections not yet in a test, over all clients (0: no limit)")
	fs.IntVar(&cfg.Limits.MaxHandshakesPerClient, "max-handshakes-per-client", cfg.Limits.MaxHandshakesPerClient, "connections not yet in a test, from one client prefix (0: no limit)")
	fs.Var(flagvalue.Duration(&cfg.Limits.FirstByteTimeout), "first-byte-timeout", "how long a new connection may say nothing before it is closed")
	fs.IntVar(&cfg.Limits.PrefixV4, "client-prefix-v4", cfg.Limits.PrefixV4, "leading bits of an IPv4 address that make one client, for the per-client limits")
	fs.IntVar(&cfg.Limits.PrefixV6, "client-prefix-v6", cfg.Limits.PrefixV6, "leading bits of an IPv6 address that make one client, for the per-client limits")
	fs.Var(flagvalue.Duration(&cfg.IdleTimeout), "idle-timeout", "with -1: exit when no connection has been open for this long, as iperf3 -1 --idle-timeout (seconds, or a duration)")
	fs.Var(flagvalue.Duration(&cfg.StatusInterval), "status-interval", "log the server's counters and goroutines this often (0: never)")
	f.Auth.Register(fs)
	f.Iperf3Auth.Register(fs)
	f.Agent.Register(fs)
	fs.Var(flagvalue.Duration(&cfg.ShutdownGrace), "shutdown-grace", "on SIGINT/SIGTERM, how long running tests may finish before they are aborted")
	fs.VarP(flagvalue.Duration(&f.Interval), "interval", "i", "seconds between the rows of each test's report, fractions allowed; 0 turns them off")
	fs.VarP(flagvalue.Format(&f.Format), "format", "f", "units of each test's text report, and of --get-server-output's when the client names none: a adaptive, b k m g t bits, B K M G T bytes")
	fs.BoolVarP(&f.JSON, "json", "J", false, "each test's report as one JSON document per line (JSON Lines), and iperf3 clients' --get-server-output in JSON")
	f.registerMulticast(fs)
}

// bitrateLimit is RATE[/SECONDS] (--server-bitrate-limit,
// --server-total-bitrate-limit): RATE read as iperf3 reads -b, SECONDS
// the averaging window.
type bitrateLimit struct {
	rate   *float64
	window *time.Duration
}

func (b bitrateLimit) String() string {
	if b.rate == nil || *b.rate == 0 {
		return "0"
	}
	return fmt.Sprintf("%s/%s", units.RateString(*b.rate), units.DurationString(*b.window))
}

func (b bitrateLimit) Set(s string) error {
	rate, window, hasWindow := strings.Cut(s, "/")
	r, err := units.ParseRate(rate)
	if err != nil {
		return err
	}
	w := server.DefaultBitrateWindow
	if hasWindow {
		if w, err = units.ParseDuration(window); err != nil {
			return err
		}
		if w <= 0 {
			return fmt.Errorf("averaging window %q: want more than 0", window)
		}
	}
	*b.rate, *b.window = r, w
	return nil
}

func (bitrateLimit) Type() string { return "rate[/seconds]" }

// Finish checks the flags and reads the key, TLS and agent files they
// name into the server's configuration. Every error is the flags'.
func (f *Flags) Finish() error {
	cfg := &f.Config
	if err := f.finishMulticast(); err != nil {
		return err
	}
	if f.Interval < 0 || (f.Interval > 0 && f.Interval < spec.MinInterval) {
		return fmt.Errorf("-i %v: want 0 (no rows) or at least %v", f.Interval, spec.MinInterval)
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		return fmt.Errorf("-p %d: want 0 to 65535", cfg.Port)
	}
	l := cfg.Limits
	if l.MaxTests < 0 || l.MaxStreams < 0 || l.MaxTestsPerClient < 0 || l.MaxDuration < 0 || l.MaxMemory < 0 ||
		l.MaxTotalStreams < 0 || l.MinKeylessInterval < 0 || l.MaxHandshakes < 0 || l.MaxHandshakesPerClient < 0 || cfg.StatusInterval < 0 || cfg.IdleTimeout < 0 {
		return fmt.Errorf("limits must not be negative")
	}
	if l.PrefixV4 < 1 || l.PrefixV4 > 32 || l.PrefixV6 < 1 || l.PrefixV6 > 128 {
		return fmt.Errorf("--client-prefix-v4 wants 1 to 32, --client-prefix-v6 1 to 128")
	}
	var err error
	if cfg.Keys, cfg.ACL, cfg.TLS, err = f.Auth.Load(); err != nil {
		return err
	}
	cfg.Iperf3Open = f.Auth.Iperf3Open
	if cfg.Iperf3Auth, err = f.Iperf3Auth.Load(); err != nil {
		return err
	}
	if cfg.Agent, err = f.Agent.Load(); err != nil {
		return err
	}
	return nil
}

// Server is the server the finished flags describe, logging to logger
// and writing each test's report to w (emit.ServerReport): its rows as
// they come, then its summary.
func (f *Flags) Server(w io.Writer, logger *slog.Logger) *server.Server {
	cfg := f.Config
	cfg.Logger = logger
	if cfg.Agent != nil {
		cfg.Agent.Logger = logger
	}
	output := emit.ServerOutput(!f.JSON)
	cfg.ServerOutput = func(r *result.Result, format units.Format) ([]byte, bool) {
		if format == 0 { // the client named none: the server's own -f
			format = f.Format
		}
		return output(r, format)
	}
	report := &emit.ServerReport{W: w, Interval: f.Interval, JSON: f.JSON, Opt: emit.Options{Format: f.Format}}
	cfg.Live = func(id int64, peer net.Addr) result.Observer {
		return report.Live(fmt.Sprintf("t%d", id), peer.String())
	}
	cfg.OnTest = func(t server.Finished) {
		if err := report.Write(fmt.Sprintf("t%d", t.ID), t.Peer.String(), t.Result); err != nil {
			logger.Warn("writing a test's report failed", "test", t.ID, "err", err)
		}
	}
	return server.New(cfg)
}
