package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// logOptions are the logging flags every command shares.
type logOptions struct {
	level  string
	format string
}

func (o logOptions) logger(w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(o.level)); err != nil {
		return nil, usagef("--log-level %q: want debug, info, warn or error", o.level)
	}
	hopts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(o.format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, hopts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, hopts)), nil
	}
	return nil, usagef("--log-format %q: want text or json", o.format)
}

// openOutput returns where a command's report goes: the --logfile (appended
// to, as iperf does) or stdout.
func openOutput(path string, stdout io.Writer) (io.Writer, func() error, error) {
	if path == "" {
		return stdout, func() error { return nil }, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("--logfile: %w", err)
	}
	return f, f.Close, nil
}

// runIO is what a measuring command needs before it starts: its logger,
// where its report goes, and a context that the first interrupt cancels
// (ending the run cleanly, with its report) while a second one ends the
// process.
type runIO struct {
	log  *slog.Logger
	out  io.Writer
	ctx  context.Context
	done func()
}

// sameSignal is how soon after a first signal a second counts as the
// same one delivered twice.
const sameSignal = time.Second

// afterSameSignal is what a run does once a signal has cancelled it: it
// keeps catching signals for sameSignal, then calls stop, after which the
// next one ends the process at once.
func afterSameSignal(stop func()) { time.AfterFunc(sameSignal, stop) }

func startRun(ctx context.Context, e env, lo logOptions, logfile string) (*runIO, error) {
	return startRunWindow(ctx, e, lo, logfile, afterSameSignal)
}

// startRunWindow is startRun with what happens after the first signal
// given: window gets the function that stops catching signals. A test
// passes its own, to decide when a second signal comes without racing
// a timer.
func startRunWindow(ctx context.Context, e env, lo logOptions, logfile string, window func(stop func())) (*runIO, error) {
	log, err := lo.logger(e.stderr)
	if err != nil {
		return nil, err
	}
	out, closeOut, err := openOutput(logfile, e.stdout)
	if err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		// After the first signal a second one stops the process at once,
		// but not one within the window: a Ctrl-C reaches both a wrapper
		// that passes signals on (lab exec) and its child, which then
		// gets it twice, and must still record what it cut short.
		window(stop)
	}()
	return &runIO{log: log, out: out, ctx: ctx, done: func() { stop(); _ = closeOut() }}, nil
}
