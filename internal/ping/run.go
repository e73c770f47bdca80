package ping

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// Run pings target (a host name or an address) as cfg says and returns
// what it measured. An error is one that let no request out (bad config,
// no address, no socket); unanswered requests are loss, not an error.
func Run(ctx context.Context, target string, cfg Config) (Result, error) {
	if err := cfg.Check(); err != nil {
		return Result{}, err
	}
	dst, err := Resolve(ctx, target, cfg.Family)
	if err != nil {
		return Result{}, fmt.Errorf("ping %s: %w", target, err)
	}
	s, err := open(dst, cfg.Raw)
	if err != nil {
		return Result{}, err
	}
	defer s.conn.Close()
	r := Result{Target: target, Addr: dst.String(), Raw: cfg.Raw, Size: cfg.Size, Started: time.Now().UTC()}
	t := newTally(cfg.Count)
	err = s.run(ctx, dst, cfg, t)
	t.fill(&r)
	r.Ended = time.Now().UTC()
	return r, err
}

// sock is the socket a run sends its requests and reads its replies on.
type sock struct {
	conn  *icmp.PacketConn
	v6    bool
	raw   bool
	id    uint16 // a raw socket's echo identifier (a ping socket's is the kernel's)
	echo  icmp.Type
	proto int // ICMP's protocol number, to parse a reply
}

// open opens a ping socket, or a raw one, for dst's family.
func open(dst netip.Addr, raw bool) (*sock, error) {
	s := &sock{v6: dst.Is6(), raw: raw, id: uint16(rand.Uint32())}
	network, any := "udp4", "0.0.0.0"
	s.echo, s.proto = ipv4.ICMPTypeEcho, 1
	if s.v6 {
		network, any = "udp6", "::"
		s.echo, s.proto = ipv6.ICMPTypeEchoRequest, 58
	}
	if raw {
		network = map[bool]string{false: "ip4:icmp", true: "ip6:ipv6-icmp"}[s.v6]
	}
	c, err := icmp.ListenPacket(network, any)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			if raw {
				return nil, errors.New("ping --raw: a raw ICMP socket needs root or CAP_NET_RAW")
			}
			return nil, fmt.Errorf("ping: %w", SocketDenied())
		}
		return nil, fmt.Errorf("ping: an ICMP socket: %w", err)
	}
	s.conn = c
	// The replies' TTL (hop limit); a socket that can't say leaves it 0.
	if s.v6 {
		if p := c.IPv6PacketConn(); p != nil {
			p.SetControlMessage(ipv6.FlagHopLimit, true)
		}
	} else if p := c.IPv4PacketConn(); p != nil {
		p.SetControlMessage(ipv4.FlagTTL, true)
	}
	return s, nil
}

// run sends cfg.Count requests cfg.Interval apart and reads the replies
// until the last request's timeout, or until every request has its
// reply.
func (s *sock) run(ctx context.Context, dst netip.Addr, cfg Config, t *tally) error {
	data := make([]byte, cfg.Size)
	for i := range data {
		data[i] = byte(i)
	}
	to := &net.UDPAddr{IP: dst.AsSlice()}
	var toRaw net.Addr = &net.IPAddr{IP: dst.AsSlice()}
	allIn := make(chan struct{})
	readErr := make(chan error, 1)
	go func() { readErr <- s.readReplies(dst, t, allIn) }()
	// Cancelling ctx, or the end of the run, ends the read that waits.
	stop := context.AfterFunc(ctx, func() { s.conn.SetReadDeadline(time.Now()) })
	defer stop()

	var sendErr error
	next := time.Now()
	for i := range cfg.Count {
		if d := time.Until(next); d > 0 {
			if !sleep(ctx, d) {
				break
			}
		}
		next = next.Add(cfg.Interval)
		m := icmp.Message{Type: s.echo, Body: &icmp.Echo{ID: int(s.id), Seq: i, Data: data}}
		b, err := m.Marshal(nil)
		if err != nil {
			sendErr = err
			break
		}
		var addr net.Addr = to
		if s.raw {
			addr = toRaw
		}
		t.request(uint16(i), time.Now())
		if _, err := s.conn.WriteTo(b, addr); err != nil && !transient(err) {
			sendErr = fmt.Errorf("ping: request %d: %w", i, err)
			break
		}
	}
	// The last request's timeout, cut short when every reply is in.
	if sendErr == nil && ctx.Err() == nil {
		timer := time.NewTimer(cfg.Timeout)
		select {
		case <-timer.C:
		case <-allIn:
		case <-ctx.Done():
		}
		timer.Stop()
	}
	s.conn.SetReadDeadline(time.Now())
	err := <-readErr
	if sendErr != nil {
		return sendErr
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// transient is a send error that loses one request, not the run: the
// host or network unreachable for now.
func transient(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	var oe *net.OpError
	return errors.As(err, &oe) && !errors.Is(err, os.ErrPermission)
}

// readReplies reads replies into t until the socket's deadline, closing
// allIn once every request sent has its reply.
func (s *sock) readReplies(dst netip.Addr, t *tally, allIn chan struct{}) error {
	buf := make([]byte, MaxSize+512)
	closed := false
	for {
		n, ttl, from, err := s.read(buf)
		at := time.Now()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil
		}
		if err != nil {
			return fmt.Errorf("ping: reading replies: %w", err)
		}
		seq, ok := s.parse(buf[:n])
		if !ok || (s.raw && from != dst) {
			continue // another's ICMP, seen by a raw socket
		}
		if t.reply(seq, at, ttl) && !closed {
			close(allIn)
			closed = true
		}
	}
}

// read reads one message with its TTL (0 if the socket doesn't say).
func (s *sock) read(buf []byte) (int, int, netip.Addr, error) {
	var n, ttl int
	var from net.Addr
	var err error
	switch p4, p6 := s.conn.IPv4PacketConn(), s.conn.IPv6PacketConn(); {
	case !s.v6 && p4 != nil:
		var cm *ipv4.ControlMessage
		n, cm, from, err = p4.ReadFrom(buf)
		if cm != nil {
			ttl = cm.TTL
		}
	case s.v6 && p6 != nil:
		var cm *ipv6.ControlMessage
		n, cm, from, err = p6.ReadFrom(buf)
		if cm != nil {
			ttl = cm.HopLimit
		}
	default:
		n, from, err = s.conn.ReadFrom(buf)
	}
	if err == nil && !s.v6 && s.raw && n > 0 && buf[0]>>4 == 4 {
		// A raw IPv4 socket may hand over the IP header too.
		if ihl := int(buf[0]&0x0f) * 4; ihl <= n {
			n = copy(buf, buf[ihl:n])
		}
	}
	return n, ttl, addrOf(from), err
}

// parse reads an echo reply's sequence number; ok is false for anything
// else and, on a raw socket, for another process's reply.
func (s *sock) parse(b []byte) (uint16, bool) {
	seq, id, ok := ParseEchoReply(s.proto, b)
	if !ok || (s.raw && id != s.id) {
		return 0, false
	}
	return seq, true
}

// ParseEchoReply reads an ICMP (proto 1) or ICMPv6 (58) message as an
// echo reply: its sequence number and identifier. Its bytes come from
// the network.
func ParseEchoReply(proto int, b []byte) (seq, id uint16, ok bool) {
	m, err := icmp.ParseMessage(proto, b)
	if err != nil || (m.Type != ipv4.ICMPTypeEchoReply && m.Type != ipv6.ICMPTypeEchoReply) {
		return 0, 0, false
	}
	e, isEcho := m.Body.(*icmp.Echo)
	if !isEcho {
		return 0, 0, false
	}
	return uint16(e.Seq), uint16(e.ID), true
}

func addrOf(a net.Addr) netip.Addr {
	var ip net.IP
	switch x := a.(type) {
	case *net.UDPAddr:
		ip = x.IP
	case *net.IPAddr:
		ip = x.IP
	}
	addr, _ := netip.AddrFromSlice(ip)
	return addr.Unmap()
}

// sleep waits d, or less when ctx ends: it says whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
