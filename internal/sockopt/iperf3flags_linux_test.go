package sockopt

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// -X lo: the socket reports the device it is bound to. Binding needs
// CAP_NET_RAW on kernels before 5.7 only for other devices; lo is fine.
func TestBindDeviceOnLoopback(t *testing.T) {
	d := &net.Dialer{Control: Control(Options{BindDevice: "lo"})}
	c, _ := pair(t, "tcp4", "127.0.0.1:0", d)
	var dev string
	err := control(rawConn(t, c), func(fd uintptr) error {
		var err error
		dev, err = unix.GetsockoptString(int(fd), unix.SOL_SOCKET, unix.SO_BINDTODEVICE)
		return err
	})
	if errors.Is(err, unix.EPERM) {
		t.Skip("SO_BINDTODEVICE needs CAP_NET_RAW here")
	}
	if err != nil {
		t.Fatal(err)
	}
	if dev != "lo" {
		t.Fatalf("SO_BINDTODEVICE = %q, want lo", dev)
	}
}

func TestBindDeviceUnknownNamesIt(t *testing.T) {
	d := &net.Dialer{Control: Control(Options{BindDevice: "nosuchdev0"})}
	_, err := d.Dial("udp4", "127.0.0.1:9")
	if err == nil || !strings.Contains(err.Error(), `SO_BINDTODEVICE "nosuchdev0"`) {
		t.Fatalf("err = %v, want it to name SO_BINDTODEVICE and the device", err)
	}
}

// --dont-fragment: IPv4 sockets take IP_PMTUDISC_DO, IPv6 sockets
// IPV6_DONTFRAG as well.
func TestDontFragment(t *testing.T) {
	for _, fam := range []struct{ network, addr string }{{"udp4", "127.0.0.1:9"}, {"udp6", "[::1]:9"}} {
		t.Run(fam.network, func(t *testing.T) {
			d := &net.Dialer{Control: Control(Options{DontFragment: true})}
			c, err := d.Dial(fam.network, fam.addr)
			if err != nil {
				t.Skipf("no %s loopback: %v", fam.network, err)
			}
			defer c.Close()
			rc := rawConn(t, c.(*net.UDPConn))
			if fam.network == "udp6" {
				if got := getInt(t, rc, unix.IPPROTO_IPV6, unix.IPV6_DONTFRAG); got != 1 {
					t.Fatalf("IPV6_DONTFRAG = %d, want 1", got)
				}
				if got := getInt(t, rc, unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER); got != unix.IPV6_PMTUDISC_DO {
					t.Fatalf("IPV6_MTU_DISCOVER = %d, want IPV6_PMTUDISC_DO", got)
				}
				return
			}
			if got := getInt(t, rc, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER); got != unix.IP_PMTUDISC_DO {
				t.Fatalf("IP_MTU_DISCOVER = %d, want IP_PMTUDISC_DO (%d)", got, unix.IP_PMTUDISC_DO)
			}
		})
	}
}

// -L: the label is leased for the destination (the kernel lists it in
// /proc/net/ip6_flowlabel) and the connection is made.
func TestFlowLabelLeasedAndConnected(t *testing.T) {
	const label = 0x1234
	d := &net.Dialer{Control: FlowLabelControl(label, Control(Options{NoDelay: true}))}
	c, s := pair(t, "tcp6", "[::1]:0", d)
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := s.Read(buf); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/net/ip6_flowlabel")
	if err != nil {
		t.Skipf("cannot read the kernel's flow labels: %v", err)
	}
	if !strings.Contains(string(b), fmt.Sprintf("%05x ", label)) {
		t.Fatalf("flow label %05x not leased; /proc/net/ip6_flowlabel:\n%s", label, b)
	}
	if got := getInt(t, rawConn(t, c), unix.IPPROTO_IPV6, ipv6FlowInfoSend); got != 1 {
		t.Fatalf("IPV6_FLOWINFO_SEND = %d, want 1", got)
	}
}

func TestFlowLabelRefusesIPv4(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	defer ln.Close()
	d := &net.Dialer{Control: FlowLabelControl(7, nil)}
	_, err = d.Dial("tcp4", ln.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "needs an IPv6 destination") {
		t.Fatalf("err = %v, want a refusal naming IPv6", err)
	}
}
