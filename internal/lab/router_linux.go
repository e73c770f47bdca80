//go:build linux

package lab

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wireperf/wireperf/internal/lab/impair"
)

// DefaultTxQueueLen is the TUN devices' queue, in packets, between the
// kernel and the router's reader (the kernel's default is 500). The kernel
// drops silently when it is full, counting only tx_dropped on the device,
// so it must absorb the bursts a sender makes while the reader is
// descheduled: 20000 packets is 240 ms at 1 Gbit/s even when every packet
// is a single 1500-byte one (a TCP super-packet counts as one entry).
const DefaultTxQueueLen = 20000

// Names inside the router's namespace. They are per namespace, so every lab
// can use the same ones.
const (
	tunA       = "imp-a" // a→b packets leave r's stack here; b→a packets are injected here
	tunB       = "imp-b" // b→a packets leave here; a→b packets are injected here
	tableAtoB  = 100
	tableBtoA  = 101
	rulePrefAB = 1000
	rulePrefBA = 1001
)

// RouterConfig configures the impairment router.
type RouterConfig struct {
	// NetNS is the router host's namespace: a name under /run/netns.
	NetNS string `json:"netns"`
	// IfaceA and IfaceB are the router host's interfaces toward a and b.
	// What arrives on IfaceA is impaired by AtoB, what arrives on IfaceB by
	// BtoA.
	IfaceA string `json:"iface_a"`
	IfaceB string `json:"iface_b"`
	// AtoB and BtoA are the impairments.
	AtoB impair.Config `json:"a_to_b"`
	BtoA impair.Config `json:"b_to_a"`
	// RandStart is where the random decisions start; the same start and traffic give the
	// same decisions.
	RandStart uint64 `json:"rand_start"`
	// MTU of the TUN devices; 0 means the larger MTU of IfaceA and IfaceB.
	MTU int `json:"mtu,omitempty"`
	// TxQueueLen of the TUN devices; 0 means DefaultTxQueueLen.
	TxQueueLen int `json:"txqueuelen,omitempty"`
	// MemoryLimit caps the packet bytes held per direction. 0 means
	// impair.Config.DefaultMemoryLimit: twice what the rate cap, delay and
	// queue limit allow, plus a second at the rate, plus 16 MiB, or 1 GiB
	// without a rate cap. Packets beyond it are dropped and counted
	// (DroppedLimit).
	MemoryLimit int64 `json:"memory_limit,omitempty"`
	// StatusFile, when set, receives the counters as JSON every
	// StatusInterval (default 1 s) and when the router stops.
	StatusFile     string        `json:"status_file,omitempty"`
	StatusInterval time.Duration `json:"status_interval,omitempty"`
	// Logf, when set, receives setup and error messages.
	Logf func(format string, args ...any) `json:"-"`
}

// Router is a running impairment router.
//
// In the router's namespace, policy routing sends every IPv4 packet that
// arrives on IfaceA to table 100, whose default route is the TUN device
// imp-a, and what arrives on IfaceB to table 101 and imp-b. For each
// direction one thread reads packets from its TUN device as fast as they
// come and hands them to an impair.Direction; another writes the packets
// that are due into the other TUN device (see tunio_linux.go). A packet written into a TUN
// device is received by the namespace's stack as if it had arrived on that
// device; the rules match only IfaceA and IfaceB, so the main table then
// forwards it toward its destination. Reverse-path filtering is off in the
// namespace, since a→b packets arrive on imp-b.
//
// Each table also holds a blackhole default route of the worst metric: if
// the router stops, its TUN devices and their routes vanish and traffic is
// dropped rather than forwarded unimpaired.
//
// The TUN devices use virtio-net headers with TCP and (Linux 6.2+) UDP
// segmentation offload, so a read or write moves a whole TCP or UDP GSO
// super-packet (up to 64 KiB) while the emulator still decides per wire
// packet (see tunio_linux.go). Other traffic (ICMP, UDP sent without GSO)
// moves one packet per system call.
//
// The writer sleeps on a timerfd armed for the head of its queue (Go's
// timers wake about 1 ms late for short sleeps on this kind of VM; a
// timerfd wakes within tens of microseconds), or ticking every writeTick
// while departures come closer together than that, so emulated delays
// come out about 0.1-0.2 ms long. Packets are kept in pooled buffers of a
// few size classes (256 B for ACKs up to 64 KiB for super-packets), so
// memory follows the bytes held: rate × delay plus the queue limit, and
// MemoryLimit as a hard stop that a configured path never reaches.
//
// Measured on the 2-core development VM at 215 ms RTT with no rate cap:
// one TCP stream reaches a delivery rate of about 3.3 Gbit/s with a
// 1500-byte MTU and 4.2 Gbit/s with 9000 bytes, with no drops in the TUN
// queues; paced UDP of 1500-byte packets (one system call per packet each
// way) is carried without loss at 74,000 packets/s (880 Mbit/s), where the
// Go test receiver, not the router, starts to drop. TestRouterCapacity
// logs these figures.
type Router struct {
	cfg  RouterConfig
	t0   time.Time
	dirs [2]*routerDir // a→b, b→a
	tuns [2]int        // imp-a, imp-b; -1 when not open
	// stopFd is an eventfd that Close signals to wake the directions'
	// threads from poll(2).
	stopFd    int
	wg        sync.WaitGroup
	stop      chan struct{}
	once      sync.Once
	schedOnce sync.Once // logs the threads\' scheduling class once
	err       error
}

type pbuf struct {
	b     []byte
	class int8 // index into bufClasses
}

// superPkt is one read from a TUN device: a virtio-net header and an IP
// packet, which for TCP may be a GSO super-packet of nseg segments.
type superPkt struct {
	buf  *pbuf
	n    int // bytes in buf.b, header included
	vh   vnetHdr
	gso  bool // a TCP/IPv4 or UDP/IPv4 super-packet the router segments
	udp  bool // of UDP datagrams (USO), not TCP segments
	iphl int  // IPv4 header length
	hl   int  // IPv4 + TCP or UDP header length
	mss  int  // payload bytes per segment (gso_size)
	plen int  // TCP or UDP payload bytes
	nseg int
	refs atomic.Int32 // segments not yet written or dropped
}

// seg is one wire packet: segment idx of a super-packet (0 for a plain
// packet). It is what the emulator schedules.
type seg struct {
	sp  *superPkt
	idx int32
}

type outItem struct {
	s      seg
	copies int
}

type routerDir struct {
	r       *Router
	name    string
	in, out int // TUN descriptors, non-blocking
	timerFd int

	// Shared by the reader and the writer (and Close, once they ended).
	mu      sync.Mutex
	d       *impair.Direction[seg]
	waiting bool  // the writer is (about to be) asleep on the timer
	armed   int64 // router-clock time a one-shot timer is armed for; MaxInt64 when none, MinInt64 while ticking
	ticking bool  // the timer is periodic (writeTick)
	batch   []outItem
	emit    func(seg, int)
	iov     [2]unix.Iovec // writev(2) of a rebuilt header and its payload

	readErrs, writeErrs, oversize, writes atomic.Uint64
	bufs                                  [len(bufClasses)]sync.Pool
	sps                                   sync.Pool
	hdr                                   [vnetHdrLen + 120]byte // scratch header for rebuilt segments
}

// StartRouter sets up the TUN devices and policy routing in cfg.NetNS and
// starts the router. Close stops it.
func StartRouter(cfg RouterConfig) (*Router, error) {
	if cfg.NetNS == "" || cfg.IfaceA == "" || cfg.IfaceB == "" {
		return nil, errors.New("lab: router needs a namespace and two interfaces")
	}
	if err := cfg.AtoB.Validate(); err != nil {
		return nil, fmt.Errorf("lab: router a→b: %w", err)
	}
	if err := cfg.BtoA.Validate(); err != nil {
		return nil, fmt.Errorf("lab: router b→a: %w", err)
	}
	if cfg.TxQueueLen == 0 {
		cfg.TxQueueLen = DefaultTxQueueLen
	}
	if cfg.StatusInterval == 0 {
		cfg.StatusInterval = time.Second
	}
	if cfg.MTU == 0 {
		for _, dev := range []string{cfg.IfaceA, cfg.IfaceB} {
			m, err := deviceMTU(cfg.NetNS, dev)
			if err != nil {
				return nil, err
			}
			cfg.MTU = max(cfg.MTU, m)
		}
	}
	if cfg.MTU < 576 || cfg.MTU > 65535 {
		return nil, fmt.Errorf("lab: router MTU %d out of range", cfg.MTU)
	}
	r := &Router{cfg: cfg, t0: time.Now(), stop: make(chan struct{}), tuns: [2]int{-1, -1}, stopFd: -1}
	ok := false
	defer func() {
		if !ok {
			r.Close()
		}
	}()

	// Sysctls, then the TUN devices, from a thread inside the namespace.
	kv, opt := baseSysctls(true)
	kv = append(kv,
		[2]string{"net.ipv4.conf." + cfg.IfaceA + ".rp_filter", "0"},
		[2]string{"net.ipv4.conf." + cfg.IfaceB + ".rp_filter", "0"})
	if err := writeSysctls(cfg.NetNS, kv, opt); err != nil {
		return nil, err
	}
	err := inNetns(nsPath(cfg.NetNS), func() error {
		for i, name := range []string{tunA, tunB} {
			f, err := openTUN(name)
			if err != nil {
				return err
			}
			r.tuns[i] = f
			for _, k := range []string{"rp_filter", "send_redirects"} {
				p := "/proc/sys/net/ipv4/conf/" + name + "/" + k
				if err := os.WriteFile(p, []byte("0"), 0o644); err != nil {
					return fmt.Errorf("lab: %s: %w", p, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if r.stopFd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return nil, fmt.Errorf("lab: eventfd: %w", err)
	}
	for _, name := range []string{tunA, tunB} {
		if err := ip("-n", cfg.NetNS, "link", "set", "dev", name, "mtu", strconv.Itoa(cfg.MTU),
			"txqueuelen", strconv.Itoa(cfg.TxQueueLen), "up"); err != nil {
			return nil, err
		}
	}

	for i, c := range []impair.Config{cfg.AtoB, cfg.BtoA} {
		d, err := impair.NewDirection[seg](c, cfg.RandStart, uint64(i+1))
		if err != nil {
			return nil, err
		}
		lim := cfg.MemoryLimit
		if lim == 0 {
			lim = c.DefaultMemoryLimit()
		}
		d.SetMemoryLimit(lim)
		dr := &routerDir{r: r, d: d, armed: math.MaxInt64, timerFd: -1}
		r.dirs[i] = dr
		dr.emit = func(s seg, copies int) { dr.batch = append(dr.batch, outItem{s, copies}) }
		dr.initPools()
		if i == 0 {
			dr.name, dr.in, dr.out = "a→b", r.tuns[0], r.tuns[1]
		} else {
			dr.name, dr.in, dr.out = "b→a", r.tuns[1], r.tuns[0]
		}
		fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
		if err != nil {
			return nil, fmt.Errorf("lab: timerfd: %w", err)
		}
		dr.timerFd = fd
	}
	// Each of the router's threads needs a P while it runs Go code; with
	// GOMAXPROCS at the CPU count, a thread coming back from poll(2) could
	// wait for the Go scheduler to free one, behind whatever else the
	// process runs (a test's traffic). A P for each of them on top lets
	// them carry on at once; the kernel still shares the CPUs.
	if want := runtime.NumCPU() + 2*len(r.dirs); runtime.GOMAXPROCS(0) < want {
		runtime.GOMAXPROCS(want)
	}
	for _, dr := range r.dirs {
		r.wg.Add(2)
		go dr.readLoop()
		go dr.writeLoop()
	}

	// Routing last, so that the readers are running when packets come.
	for _, t := range []struct {
		table, pref int
		iif, tun    string
	}{{tableAtoB, rulePrefAB, cfg.IfaceA, tunA}, {tableBtoA, rulePrefBA, cfg.IfaceB, tunB}} {
		tbl, pref := strconv.Itoa(t.table), strconv.Itoa(t.pref)
		for i := 0; i < 10 && ip("-n", cfg.NetNS, "-4", "rule", "del", "pref", pref) == nil; i++ {
		}
		_ = ip("-n", cfg.NetNS, "-4", "route", "flush", "table", tbl)
		if err := ip("-n", cfg.NetNS, "-4", "route", "add", "blackhole", "default", "table", tbl, "metric", "4294967295"); err != nil {
			return nil, err
		}
		if err := ip("-n", cfg.NetNS, "-4", "route", "add", "default", "dev", t.tun, "table", tbl); err != nil {
			return nil, err
		}
		if err := ip("-n", cfg.NetNS, "-4", "rule", "add", "pref", pref, "iif", t.iif, "lookup", tbl); err != nil {
			return nil, err
		}
	}
	if cfg.StatusFile != "" {
		if err := r.writeStatus(); err != nil {
			return nil, err
		}
		r.wg.Add(1)
		go r.statusLoop()
	}
	r.logf("lab: router up in %s: %s→%s→%s→%s, a→b %s, b→a %s, rand-start %d, MTU %d, txqueuelen %d",
		cfg.NetNS, cfg.IfaceA, tunA, tunB, cfg.IfaceB, cfg.AtoB.Text(), cfg.BtoA.Text(), cfg.RandStart, cfg.MTU, cfg.TxQueueLen)
	ok = true
	return r, nil
}

// RunRouter raises the whole process to real-time scheduling (see
// raiseProcessPriority), starts the router and serves until ctx is
// cancelled, then stops it (writing the final counters to the status
// file). This is what `wireperf lab router` runs, a process of its own;
// tests run the same router in-process with StartRouter, where only the
// router's threads are raised.
func RunRouter(ctx context.Context, cfg RouterConfig) error {
	how, err := raiseProcessPriority()
	if err != nil {
		return err
	}
	r, err := StartRouter(cfg)
	if err != nil {
		return err
	}
	r.logf("lab: router process: %s", how)
	<-ctx.Done()
	return r.Close()
}

func (r *Router) logf(format string, args ...any) {
	if r.cfg.Logf != nil {
		r.cfg.Logf(format, args...)
	}
}

// now is the router's clock: monotonic nanoseconds since start.
func (r *Router) now() int64 { return int64(time.Since(r.t0)) }

// Config returns the router's configuration, with defaults filled in.
func (r *Router) Config() RouterConfig { return r.cfg }

// Stats returns the router's own counters for both directions.
func (r *Router) Stats() RouterStats {
	var s RouterStats
	for i, dr := range r.dirs {
		if dr == nil {
			continue
		}
		ds := DirStats{Counters: dr.d.Counters(), ReadErrors: dr.readErrs.Load(),
			WriteErrors: dr.writeErrs.Load(), Oversize: dr.oversize.Load(), Writes: dr.writes.Load()}
		if i == 0 {
			s.AtoB = ds
		} else {
			s.BtoA = ds
		}
	}
	return s
}

// StatsWithLinks is Stats plus the TUN devices' own counters (from
// `ip -s link`), so that drops in the kernel's TUN queue show beside the
// router's.
func (r *Router) StatsWithLinks() (RouterStats, error) {
	s := r.Stats()
	la, err := linkStats(r.cfg.NetNS, tunA)
	if err != nil {
		return s, err
	}
	lb, err := linkStats(r.cfg.NetNS, tunB)
	if err != nil {
		return s, err
	}
	s.AtoB.TunIn, s.AtoB.TunOut = &la, &lb
	s.BtoA.TunIn, s.BtoA.TunOut = &lb, &la
	return s, nil
}

// Close stops the router: the goroutines end, the TUN devices disappear
// (and with them their routes, leaving the blackholes), packets still
// inside are discarded and counted, and the status file gets the final
// counters. It is idempotent.
func (r *Router) Close() error {
	r.once.Do(func() {
		close(r.stop)
		if r.stopFd >= 0 {
			var one [8]byte
			binary.NativeEndian.PutUint64(one[:], 1)
			_, _ = unix.Write(r.stopFd, one[:])
		}
		// The threads end before their descriptors close, so that none is
		// used after it is closed (and perhaps reused).
		r.wg.Wait()
		for _, dr := range r.dirs {
			if dr == nil {
				continue
			}
			if dr.timerFd >= 0 {
				unix.Close(dr.timerFd)
			}
			dr.d.Drain(func(s seg) { dr.release(s.sp, 1) })
		}
		for _, fd := range r.tuns {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
		if r.stopFd >= 0 {
			unix.Close(r.stopFd)
		}
		if r.cfg.StatusFile != "" {
			r.err = r.writeStatus()
		}
	})
	return r.err
}

func (r *Router) stopped() bool {
	select {
	case <-r.stop:
		return true
	default:
		return false
	}
}

func (r *Router) statusLoop() {
	defer r.wg.Done()
	t := time.NewTicker(r.cfg.StatusInterval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			if err := r.writeStatus(); err != nil {
				r.logf("lab: router status: %v", err)
			}
		}
	}
}

// writeStatus writes the counters to the status file atomically.
func (r *Router) writeStatus() error {
	st := routerStatus{PID: os.Getpid(), Started: r.t0, Updated: time.Now(), Stats: r.Stats()}
	if !r.stopped() {
		if s, err := r.StatsWithLinks(); err == nil {
			st.Stats = s
		}
	}
	js, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := r.cfg.StatusFile + ".tmp"
	if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(tmp, js, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, r.cfg.StatusFile)
}

// openTUN creates a TUN device (IP packets, no packet-information header)
// in the calling thread's namespace and returns its non-blocking
// descriptor, which the router's threads read and write with plain system
// calls (outside Go's poller).
func openTUN(name string) (int, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("lab: open /dev/net/tun: %w", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI | unix.IFF_VNET_HDR)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("lab: TUNSETIFF %s: %w", name, err)
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TUNSETVNETHDRSZ, vnetHdrLen); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("lab: TUNSETVNETHDRSZ %s: %w", name, err)
	}
	// Checksum offload and TCP segmentation offload for IPv4: the kernel
	// hands over TCP super-packets (up to 64 KiB) instead of segmenting
	// them, and accepts them back; from Linux 6.2, UDP segmentation
	// offload likewise for a UDP sender's GSO batches, which one packet per
	// read would cap at a few tens of thousands of packets a second.
	// Everything else (ECN-marked TSO, IPv6 TCP) the kernel segments
	// before the router sees it.
	if err := unix.IoctlSetInt(fd, unix.TUNSETOFFLOAD, tunFCsum|tunFTSO4|tunFUSO4|tunFUSO6); err != nil {
		if err := unix.IoctlSetInt(fd, unix.TUNSETOFFLOAD, tunFCsum|tunFTSO4); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("lab: TUNSETOFFLOAD %s: %w", name, err)
		}
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

func deviceMTU(ns, dev string) (int, error) {
	var mtu int
	err := inNetns(nsPath(ns), func() error {
		b, err := os.ReadFile("/proc/sys/net/ipv4/conf/" + dev + "/mtu")
		if err != nil {
			// Fall back to the device ioctl.
			s, err2 := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
			if err2 != nil {
				return err
			}
			defer unix.Close(s)
			ifr, err2 := unix.NewIfreq(dev)
			if err2 != nil {
				return err2
			}
			if err2 := unix.IoctlIfreq(s, unix.SIOCGIFMTU, ifr); err2 != nil {
				return fmt.Errorf("lab: MTU of %s: %w", dev, err2)
			}
			mtu = int(ifr.Uint32())
			return nil
		}
		mtu, err = strconv.Atoi(string(trimNL(b)))
		return err
	})
	return mtu, err
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}
