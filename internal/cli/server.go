package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/server/serverflags"
)

func newServerCmd(e env) *cobra.Command {
	f := serverflags.New()
	var logfile, pidfile string
	log := logOptions{level: "info", format: "text"}
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Serve tests, many at once (also: wireperf -s)",
		Example: `  wireperf -s                          serve on port 5201, IPv4 and IPv6
  wireperf -s -B 192.0.2.10 -p 5004    one address, another port
  wireperf -s --once                   serve one test, then exit`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.Finish(); err != nil {
				return usageError{err}
			}
			if f.StartsDetached() { // -D: this process only starts the server
				_, err := serverflags.StartDetached()
				return err
			}
			// In the copy -D started, the first process waits for this
			// notice: serving, or the error that came first.
			notice := serverflags.ServingNotice()
			err := runServer(cmd, e, f, logfile, pidfile, log, notice.Serving)
			notice.Failed(err)
			return err
		},
	}
	fs := cmd.Flags()
	f.Register(fs)
	fs.StringVar(&logfile, "logfile", "", "write the reports and the log to this file instead of stdout and stderr (appends)")
	fs.StringVar(&pidfile, "pidfile", "", "write the server's process ID to this file while it runs")
	fs.StringVar(&log.level, "log-level", log.level, "log level: debug, info, warn, error")
	fs.StringVar(&log.format, "log-format", log.format, "log format: text or json")
	return cmd
}

// runServer serves until the command's context ends or a signal comes,
// calling serving once it listens.
func runServer(cmd *cobra.Command, e env, f *serverflags.Flags, logfile, pidfile string, log logOptions, serving func()) error {
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
	if pidfile != "" {
		removePID, err := writePIDFile(pidfile)
		if err != nil {
			return err
		}
		defer removePID()
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
	if m := f.Multicast(); m != nil { // -B GROUP: iperf 2's multicast receiver
		m.Joined = serving
		return m.Run(ctx, reportOut)
	}
	srv := f.Server(reportOut, logger)
	if err := srv.Listen(); err != nil {
		return err
	}
	serving()
	return srv.Serve(ctx)
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
