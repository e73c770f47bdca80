package lab

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/flagvalue"
	"github.com/wireperf/wireperf/internal/lab/impair"
)

// UpFlags are the settings of `wireperf lab up` as flags: Register adds
// them to a command, Config turns what was given into a Config.
type UpFlags struct {
	RTT, Jitter time.Duration
	Rate        float64
	Loss        float64
	Reorder     float64
	Duplicate   float64
	Burst       *impair.GilbertElliott
	Queue       int64
	MTU         int
	RandStart   uint64
	Senders     int
	AccessRate  float64
	TCPBuffers  string
}

// NewUpFlags are the flags' defaults.
func NewUpFlags() *UpFlags { return &UpFlags{MTU: 1500, TCPBuffers: string(BuffersStock)} }

// Register adds the flags to fs.
func (f *UpFlags) Register(fs *pflag.FlagSet) {
	fs.Var(flagvalue.Duration(&f.RTT), "rtt", "round-trip delay, half of it each way (e.g. 215ms)")
	fs.Var(flagvalue.Duration(&f.Jitter), "jitter", "uniform jitter of ± this on each packet's delay, each way; keeps packet order")
	fs.Var(flagvalue.Rate(&f.Rate), "rate", "rate cap each way, bit/s on an Ethernet line (e.g. 1g, 100m; k m g t are powers of 1000 in either case); 0 for none")
	fs.Var(impair.Percent(&f.Loss), "loss", "random loss each way (e.g. 0.1%)")
	fs.Var(impair.Percent(&f.Reorder), "reorder", "share of packets held back behind the next one, each way (e.g. 0.5%)")
	fs.Var(impair.Percent(&f.Duplicate), "duplicate", "share of packets sent twice, each way (e.g. 0.1%)")
	fs.Var(impair.BurstLoss(&f.Burst), "burst-loss", "Gilbert burst loss P,R: P the chance to enter a loss burst, R to leave it (e.g. 1%,30%)")
	fs.Var(flagvalue.Size(&f.Queue), "queue", "bytes that may wait for the rate cap, each way (e.g. 1M; default 50 ms at the rate)")
	fs.IntVar(&f.MTU, "mtu", f.MTU, "MTU of every link")
	fs.Uint64Var(&f.RandStart, "rand-start", 0, "where the emulator's random-number generator starts (0: from the clock; status shows it)")
	fs.IntVar(&f.Senders, "senders", 0, "build senders a1…aN, each with its own access link, sharing the path to b (wireperf group)")
	fs.Var(flagvalue.Rate(&f.AccessRate), "access-rate", "with --senders: cap each access link, both ways, bit/s (e.g. 300m; 1G is 10^9)")
	fs.StringVar(&f.TCPBuffers, "tcp-buffers", f.TCPBuffers, "the hosts' TCP autotuning limits: stock (Linux's: receive up to 6 MiB, send 4 MiB) or big (128 MiB each, a tuned host)")
}

// Config turns the flags into the lab's configuration, checking what the
// flags alone cannot. fs says which flags were given.
func (f *UpFlags) Config(fs *pflag.FlagSet) (Config, error) {
	queueSet := fs.Changed("queue")
	if f.MTU < 576 || f.MTU > 65535 {
		return Config{}, fmt.Errorf("--mtu %d: want 576 to 65535", f.MTU)
	}
	if f.RTT > 2*time.Hour || f.Jitter > time.Hour {
		return Config{}, fmt.Errorf("--rtt %v, --jitter %v: the emulator delays by at most 1h each way", f.RTT, f.Jitter)
	}
	if queueSet && f.Rate == 0 {
		return Config{}, fmt.Errorf("--queue is the rate cap's queue: give --rate too")
	}
	if queueSet && (f.Queue < 1 || f.Queue > 1<<31-1) {
		return Config{}, fmt.Errorf("--queue %d: want 1 byte to 2 GiB", f.Queue)
	}
	if f.Senders < 0 || f.Senders > MaxSenders {
		return Config{}, fmt.Errorf("--senders %d: want 1 to %d", f.Senders, MaxSenders)
	}
	if fs.Changed("access-rate") && f.Senders == 0 {
		return Config{}, fmt.Errorf("--access-rate caps each sender's access link: give --senders too")
	}
	buffers, err := ParseTCPBuffers(f.TCPBuffers)
	if err != nil {
		return Config{}, err
	}
	cfg := Config{
		RTT: f.RTT, Jitter: f.Jitter, Rate: f.Rate, Loss: f.Loss, Reorder: f.Reorder,
		MTU: f.MTU, RandStart: f.RandStart, Senders: f.Senders, AccessRate: f.AccessRate,
		TCPBuffers: buffers,
	}
	atob, btoa := cfg.Directions()
	if f.Duplicate > 0 || f.Burst != nil || queueSet {
		for _, d := range []*impair.Config{&atob, &btoa} {
			d.Duplicate = f.Duplicate
			if f.Burst != nil {
				g := *f.Burst
				d.GE = &g
			}
			if queueSet {
				d.QueueLimit = int(f.Queue)
			}
		}
		cfg.AtoB, cfg.BtoA = &atob, &btoa
	}
	if err := atob.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}
