package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/auth/authflags"
	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/spec"
)

func newServerCmd(e env) *cobra.Command {
	cfg := server.Config{Port: spec.DefaultPort, Limits: server.DefaultLimits(), ShutdownGrace: 5 * time.Second}
	var logfile, pidfile string
	interval := time.Second
	var sec authflags.Server
	var ag authflags.Agent
	var jsonOutput bool
	log := logOptions{level: "info", format: "text"}
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Serve tests, many at once (also: wireperf -s)",
		Example: `  wireperf -s                          serve on port 5201, IPv4 and IPv6
  wireperf -s -B 192.0.2.10 -p 5004    one address, another port
  wireperf -s --once                   serve one test, then exit`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if interval < 0 || (interval > 0 && interval < spec.MinInterval) {
				return usagef("-i %v: want 0 (no rows) or at least %v", interval, spec.MinInterval)
			}
			if cfg.Port < 0 || cfg.Port > 65535 {
				return usagef("-p %d: want 0 to 65535", cfg.Port)
			}
			l := cfg.Limits
			if l.MaxTests < 0 || l.MaxStreams < 0 || l.MaxTestsPerClient < 0 || l.MaxDuration < 0 || l.MaxMemory < 0 ||
				l.MaxTotalStreams < 0 || l.MaxHandshakes < 0 || l.MaxHandshakesPerClient < 0 || cfg.StatusInterval < 0 {
				return usagef("limits must not be negative")
			}
			if l.PrefixV4 < 1 || l.PrefixV4 > 32 || l.PrefixV6 < 1 || l.PrefixV6 > 128 {
				return usagef("--client-prefix-v4 wants 1 to 32, --client-prefix-v6 1 to 128")
			}
			var err error
			if cfg.Keys, cfg.ACL, cfg.TLS, err = sec.Load(); err != nil {
				return usageError{err}
			}
			cfg.Iperf3Open = sec.Iperf3Open
			if cfg.Agent, err = ag.Load(); err != nil {
				return usageError{err}
			}
			// The reports go to stdout and the log to stderr, or both to
			// --logfile.
			reportOut, logOut := e.stdout, e.stderr
			if logfile != "" {
				out, closeOut, err := openOutput(logfile, e.stderr)
				if err != nil {
					return err
				}
				defer closeOut()
				shared := &lockedWriter{w: out}
				reportOut, logOut = shared, shared
			}
			logger, err := log.logger(logOut)
			if err != nil {
				return err
			}
			cfg.Logger = logger
			if cfg.Agent != nil {
				cfg.Agent.Logger = logger
			}
			cfg.ServerOutput = emit.ServerOutput(!jsonOutput)
			report := &emit.ServerReport{W: reportOut, Interval: interval, JSON: jsonOutput}
			cfg.Live = func(id int64, peer net.Addr) result.Observer {
				return report.Live(fmt.Sprintf("t%d", id), peer.String())
			}
			cfg.OnTest = func(f server.Finished) {
				if err := report.Write(fmt.Sprintf("t%d", f.ID), f.Peer.String(), f.Result); err != nil {
					logger.Warn("writing a test's report failed", "test", f.ID, "err", err)
				}
			}
			if pidfile != "" {
				removePID, err := writePIDFile(pidfile)
				if err != nil {
					return err
				}
				defer removePID()
			}
			srv := server.New(cfg)
			if err := srv.Listen(); err != nil {
				return err
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			// The first signal asks for a clean shutdown; a second one
			// ends the process at once, as the default handler does.
			go func() { <-ctx.Done(); stop() }()
			return srv.Serve(ctx)
		},
	}
	fs := cmd.Flags()
	fs.IntVarP(&cfg.Port, "port", "p", cfg.Port, "port to listen on")
	fs.StringVarP(&cfg.Bind, "bind", "B", "", "address to listen on (default: every address, IPv4 and IPv6)")
	fs.BoolVarP(&cfg.Once, "once", "1", false, "serve one test, then exit")
	fs.IntVar(&cfg.Limits.MaxTests, "max-tests", cfg.Limits.MaxTests, "tests running at once, over all clients (0: no limit)")
	fs.IntVar(&cfg.Limits.MaxTestsPerClient, "max-tests-per-client", cfg.Limits.MaxTestsPerClient, "tests running at once from one client prefix (see --client-prefix-v4, -v6; 0: no limit)")
	fs.IntVar(&cfg.Limits.MaxStreams, "max-streams", cfg.Limits.MaxStreams, "data connections of one test (0: no limit)")
	fs.Var(flagvalue.Size(&cfg.Limits.MaxTestMemory), "max-test-memory", "data buffers of one test: data connections × -l (0: no limit)")
	fs.Var(flagvalue.Duration(&cfg.Limits.MaxDuration), "max-duration", "longest test admitted, e.g. 1h (0: no limit)")
	fs.Var(flagvalue.Size(&cfg.Limits.MaxMemory), "max-memory", "data buffers of all running tests together; a quarter of this machine's memory unless set (0: no limit)")
	fs.IntVar(&cfg.Limits.MaxTotalStreams, "max-total-streams", cfg.Limits.MaxTotalStreams, "data connections of all running tests together (0: no limit)")
	fs.IntVar(&cfg.Limits.MaxHandshakes, "max-handshakes", cfg.Limits.MaxHandshakes, "connections not yet in a test, over all clients (0: no limit)")
	fs.IntVar(&cfg.Limits.MaxHandshakesPerClient, "max-handshakes-per-client", cfg.Limits.MaxHandshakesPerClient, "connections not yet in a test, from one client prefix (0: no limit)")
	fs.Var(flagvalue.Duration(&cfg.Limits.FirstByteTimeout), "first-byte-timeout", "how long a new connection may say nothing before it is closed")
	fs.IntVar(&cfg.Limits.PrefixV4, "client-prefix-v4", cfg.Limits.PrefixV4, "leading bits of an IPv4 address that make one client, for the per-client limits")
	fs.IntVar(&cfg.Limits.PrefixV6, "client-prefix-v6", cfg.Limits.PrefixV6, "leading bits of an IPv6 address that make one client, for the per-client limits")
	fs.Var(flagvalue.Duration(&cfg.StatusInterval), "status-interval", "log the server's counters and goroutines this often (0: never)")
	sec.Register(fs)
	ag.Register(fs)
	fs.Var(flagvalue.Duration(&cfg.ShutdownGrace), "shutdown-grace", "on SIGINT/SIGTERM, how long running tests may finish before they are aborted")
	fs.VarP(flagvalue.Duration(&interval), "interval", "i", "seconds between the rows of each test's report, fractions allowed; 0 turns them off")
	fs.BoolVarP(&jsonOutput, "json", "J", false, "each test's report as one JSON document per line (JSON Lines), and iperf3 clients' --get-server-output in JSON")
	fs.StringVar(&logfile, "logfile", "", "write the reports and the log to this file instead of stdout and stderr (appends)")
	fs.StringVar(&pidfile, "pidfile", "", "write the server's process ID to this file while it runs")
	fs.StringVar(&log.level, "log-level", log.level, "log level: debug, info, warn, error")
	fs.StringVar(&log.format, "log-format", log.format, "log format: text or json")
	return cmd
}

// lockedWriter lets the reports and the log share one file: each Write
// is whole.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// writePIDFile writes this process's ID to path, which must not exist:
// a file left there names another server, or one that died without
// removing it, and only the user can tell which. remove deletes it.
func writePIDFile(path string) (remove func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, fs.ErrExist) {
		old, _ := os.ReadFile(path)
		pid := strings.TrimSpace(string(old))
		if pid == "" || len(pid) > 20 {
			pid = "unknown"
		}
		return nil, fmt.Errorf("--pidfile %s already exists (pid %s): another server is running, or one that stopped left it behind; remove it if no server runs", path, pid)
	}
	if err != nil {
		return nil, fmt.Errorf("--pidfile: %w", err)
	}
	_, err = fmt.Fprintf(f, "%d\n", os.Getpid())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("--pidfile: %w", err)
	}
	return func() { _ = os.Remove(path) }, nil
}
