//go:build !linux

package lab

import (
	"context"
	"net"
	"net/netip"
	"os/exec"
	"time"

	"github.com/wireperf/wireperf/internal/lab/impair"
)

// DefaultTxQueueLen is the TUN devices' queue on Linux.
const DefaultTxQueueLen = 20000

// StateDir holds the files of persistent labs on Linux.
var StateDir = "/run/wireperf"

// Lab is a set of network namespaces; it exists only on Linux.
type Lab struct{}

// Host is one namespace of a Lab; it exists only on Linux.
type Host struct {
	Name string
	NS   string
	Addr netip.Addr
}

// RouterConfig configures the impairment router (Linux only).
type RouterConfig struct {
	NetNS          string
	IfaceA, IfaceB string
	AtoB, BtoA     impair.Config
	RandStart      uint64
	MTU            int
	TxQueueLen     int
	MemoryLimit    int64
	StatusFile     string
	StatusInterval time.Duration
	Logf           func(format string, args ...any)
}

// Router is the impairment router (Linux only).
type Router struct{}

// New skips the test: the lab needs Linux network namespaces.
func New(t TB, topo Topology) *Lab {
	t.Helper()
	t.Skipf("lab: %v", ErrNeedsLinux)
	return nil
}

func (l *Lab) Host(name string) *Host                            { return nil }
func (l *Lab) Router() *Router                                   { return nil }
func (l *Lab) RouterStats() (RouterStats, error)                 { return RouterStats{}, ErrNeedsLinux }
func (l *Lab) QdiscStats(host, dev string) ([]QdiscStats, error) { return nil, ErrNeedsLinux }
func (l *Lab) LinkStats(host, dev string) (LinkStats, error)     { return LinkStats{}, ErrNeedsLinux }
func (l *Lab) Close() error                                      { return nil }

func (h *Host) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, name, args...)
}
func (h *Host) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return nil, ErrNeedsLinux
}
func (h *Host) Do(fn func() error) error { return ErrNeedsLinux }
func (h *Host) Listen(ctx context.Context, lc *net.ListenConfig, network, address string) (net.Listener, error) {
	return nil, ErrNeedsLinux
}
func (h *Host) ListenPacket(ctx context.Context, lc *net.ListenConfig, network, address string) (net.PacketConn, error) {
	return nil, ErrNeedsLinux
}
func (h *Host) Dial(ctx context.Context, d *net.Dialer, network, address string) (net.Conn, error) {
	return nil, ErrNeedsLinux
}
func (h *Host) AddrOn(peer string) netip.Addr               { return netip.Addr{} }
func (h *Host) Iface(peer string) string                    { return "" }
func (h *Host) Sysctl(key, value string) error              { return ErrNeedsLinux }
func (h *Host) ReadSysctl(key string) (string, error)       { return "", ErrNeedsLinux }
func (h *Host) UDPStats() (map[string]uint64, error)        { return nil, ErrNeedsLinux }
func StartRouter(cfg RouterConfig) (*Router, error)         { return nil, ErrNeedsLinux }
func RunRouter(ctx context.Context, cfg RouterConfig) error { return ErrNeedsLinux }
func (r *Router) Stats() RouterStats                        { return RouterStats{} }
func (r *Router) StatsWithLinks() (RouterStats, error)      { return RouterStats{}, ErrNeedsLinux }
func (r *Router) Close() error                              { return nil }
func (r *Router) Config() RouterConfig                      { return RouterConfig{} }
func Up(name string, cfg Config) (*Info, error)             { return nil, ErrNeedsLinux }
func Status(name string) (*State, error)                    { return nil, ErrNeedsLinux }
func Down(name string) error                                { return ErrNeedsLinux }
func Exec(name, host string, argv []string) error           { return ErrNeedsLinux }
func List() ([]string, error)                               { return nil, ErrNeedsLinux }
func RouterMain(ctx context.Context, name string) error     { return ErrNeedsLinux }
func LoadRouterConfig(name string) (RouterConfig, error)    { return RouterConfig{}, ErrNeedsLinux }
