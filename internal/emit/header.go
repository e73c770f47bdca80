package emit

import (
	"net"
	"strconv"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// Header is what's known when the test starts, from the client's side.
type Header struct {
	ServerAddr string // "127.0.0.1:5201" as dialled, or "127.0.0.1 port 5201"
	Spec       spec.Spec
	Streams    []HeaderStream // one per data connection
	// Local and Remote carry host details and, where their Streams are
	// filled, socket buffers for streams that HeaderStream lacks.
	Local, Remote result.End
	// Token and StartedAt fill the JSON start event's cookie and
	// timestamp; a zero StartedAt means the time Header is called.
	Token     string
	StartedAt time.Time
	// ControlMSS is the control connection's MSS (-V); 0 when unknown.
	ControlMSS int
}

// HeaderStream is one data connection.
type HeaderStream struct {
	ID                    int
	LocalAddr, RemoteAddr string         // the client's address first
	Sender                bool           // the client sends on it
	Socket                result.Socket  // the client's
	RemoteSocket          *result.Socket // the server's, nil if not known yet
}

// HeaderFromResult rebuilds the Header of a finished test.
func HeaderFromResult(r *result.Result) Header {
	client, server := &r.Local, &r.Remote
	if r.Local.Role == result.RoleServer {
		client, server = server, client
	}
	h := Header{
		ServerAddr: r.ServerAddr,
		Spec:       r.Spec,
		Local:      r.Local,
		Remote:     r.Remote,
		Token:      r.Token,
		StartedAt:  r.StartedAt,
		ControlMSS: r.ControlMSS,
	}
	if h.ServerAddr == "" && r.ConnectHost != "" {
		h.ServerAddr = net.JoinHostPort(r.ConnectHost, strconv.Itoa(r.ConnectPort))
	}
	for _, s := range client.Streams {
		hs := HeaderStream{ID: s.ID, LocalAddr: s.LocalAddr, RemoteAddr: s.RemoteAddr, Sender: s.Sender, Socket: s.Socket}
		if peer := streamByID(server, s.ID); peer != nil {
			sock := peer.Socket
			hs.RemoteSocket = &sock
		}
		h.Streams = append(h.Streams, hs)
	}
	return h
}

func streamByID(e *result.End, id int) *result.Stream {
	for i := range e.Streams {
		if e.Streams[i].ID == id {
			return &e.Streams[i]
		}
	}
	return nil
}
