package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
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
