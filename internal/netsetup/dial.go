package netsetup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/sockopt"
)

// Client is how a client reaches its server: -B's local address ("" for
// any), --cport's first data port (0 for any) and the connect timeout.
type Client struct {
	Bind    string
	CPort   int
	Timeout time.Duration
	// Family is "4" or "6" with -4 or -6: every name resolves, and every
	// socket dials, in that family only; "" for either.
	Family string
	// BindDevice is -X: every socket is bound to this interface.
	BindDevice string
	// FlowLabel is -L: the IPv6 flow label of TCP data connections,
	// which Dialer sets when asked with DataDialer.
	FlowLabel int
	// MPTCP is -m: DataDialer dials TCP data connections in MPTCP. The
	// control connection stays TCP, as iperf3's does.
	MPTCP bool
}

// Network is network ("tcp" or "udp") narrowed to Family.
func (c Client) Network(network string) string { return network + c.Family }

// DataPort is stream id's local port: --cport for the first stream and
// the ports after it for the others, as iperf3 does; 0 without --cport.
func (c Client) DataPort(id int) int {
	if c.CPort > 0 {
		return c.CPort + id - 1
	}
	return 0
}

// Dialer dials network ("tcp" or "udp") from -B's address and localPort
// (0 for any), with o applied before connect.
func (c Client) Dialer(network string, localPort int, o sockopt.Options) (*net.Dialer, error) {
	d := &net.Dialer{Timeout: c.Timeout}
	if c.Bind != "" || localPort != 0 {
		var ip net.IP
		if c.Bind != "" {
			ip = net.ParseIP(c.Bind)
			if ip == nil {
				addrs, err := net.DefaultResolver.LookupIP(context.Background(), "ip"+c.Family, c.Bind)
				if err != nil || len(addrs) == 0 {
					return nil, fmt.Errorf("-B %s: cannot resolve the local address", c.Bind)
				}
				ip = addrs[0]
			}
		}
		if network == "udp" || network == "udp4" || network == "udp6" {
			d.LocalAddr = &net.UDPAddr{IP: ip, Port: localPort}
		} else {
			d.LocalAddr = &net.TCPAddr{IP: ip, Port: localPort}
		}
	}
	if c.BindDevice != "" {
		o.BindDevice = c.BindDevice
	}
	if o != (sockopt.Options{}) {
		d.Control = sockopt.Control(o)
	}
	return d, nil
}

// DataDialer is Dialer for a data connection: with -L, a TCP one also
// carries the flow label (iperf3 labels TCP data connections only), and
// with -m it is MPTCP's. Where the kernel has no MPTCP, Go dials TCP
// instead; the stream's report says which it got (tcpinfo.GetMPTCP).
func (c Client) DataDialer(network string, localPort int, o sockopt.Options) (*net.Dialer, error) {
	d, err := c.Dialer(network, localPort, o)
	if err != nil || !strings.HasPrefix(network, "tcp") {
		return d, err
	}
	if c.FlowLabel != 0 {
		d.Control = sockopt.FlowLabelControl(c.FlowLabel, d.Control)
	}
	if c.MPTCP {
		d.SetMultipathTCP(true)
		d.Control = mptcpControl(d.Control)
	}
	return d, nil
}

// Listen opens the server's TCP listener on addr. It accepts MPTCP
// connections beside TCP ones (Go's default since 1.24; mptcp, -m,
// asks for it whatever GODEBUG says), so that a client's -m gets MPTCP
// data connections from any wireperf server, as from iperf3's.
func Listen(ctx context.Context, addr string, mptcp bool) (net.Listener, error) {
	var lc net.ListenConfig
	if mptcp {
		lc.SetMultipathTCP(true)
	}
	return lc.Listen(ctx, "tcp", addr)
}

// DialError keeps the part of a dial error a user needs: "connection
// refused", "i/o timeout", "no such host".
func DialError(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// SplitHostPort splits "host:port" into the host and the port number, as
// a report shows them ("host port N"); an address without a port is all host.
func SplitHostPort(addr string) (string, int) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, 0
	}
	p, _ := strconv.Atoi(port)
	return host, p
}
