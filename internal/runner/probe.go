package runner

import (
	"context"
	"encoding/json"
	"io"

	"github.com/wireperf/wireperf/internal/ping"
	"github.com/wireperf/wireperf/internal/tcpconnect"
)

// Ping pings host and writes what it measured to w: one JSON document
// (ping.Document, its error inside it too) when asJSON, else ping's
// summary. The error is the run's, or the write's.
func Ping(ctx context.Context, w io.Writer, host string, cfg ping.Config, asJSON bool) error {
	r, err := ping.Run(ctx, host, cfg)
	if asJSON {
		doc := ping.Document{Ping: &r}
		if err != nil {
			doc = ping.Document{Error: err.Error()}
		}
		return writeDoc(w, doc, err)
	}
	if err != nil {
		return err
	}
	return ping.WriteText(w, r)
}

// TCPConnect times the handshakes to target (HOST:PORT) and writes them
// to w, as Ping does.
func TCPConnect(ctx context.Context, w io.Writer, target string, cfg tcpconnect.Config, asJSON bool) error {
	r, err := tcpconnect.Run(ctx, target, cfg)
	if asJSON {
		doc := tcpconnect.Document{TCPConnect: &r}
		if err != nil {
			doc = tcpconnect.Document{Error: err.Error()}
		}
		return writeDoc(w, doc, err)
	}
	if err != nil {
		return err
	}
	return tcpconnect.WriteText(w, r)
}

// writeDoc writes doc as one line of JSON and returns the run's error,
// else the write's.
func writeDoc(w io.Writer, doc any, err error) error {
	if werr := json.NewEncoder(w).Encode(doc); err == nil {
		err = werr
	}
	return err
}
