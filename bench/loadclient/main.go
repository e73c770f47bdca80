// Command loadclient starts many native clients at once against a
// wireperf server, from several loopback addresses, and reports how long
// the server took to answer each: its streams connected (served) or its
// refusal. bench/load.sh runs it; it talks to 127.0.0.0/8 only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
)

type outcome struct {
	served, refused bool
	answer          time.Duration
	err             error
}

// started notes when a client's streams connected.
type started struct {
	once sync.Once
	at   chan time.Time
}

func (s *started) Started(*result.Result) {
	s.once.Do(func() { s.at <- time.Now() })
}
func (s *started) Interval(*result.Result, result.IntervalRow) {}

func main() {
	port := flag.Int("p", 5201, "server port on 127.0.0.1")
	n := flag.Int("n", 100, "clients")
	secs := flag.Duration("t", time.Second, "test length")
	sources := flag.Int("sources", 50, "loopback source addresses, from 127.0.0.2")
	limit := flag.Duration("within", 2*time.Second, "the longest acceptable answer")
	flag.Parse()
	if ip := net.ParseIP("127.0.0.1"); ip == nil || *sources < 1 || *sources > 250 {
		fmt.Fprintln(os.Stderr, "loadclient: -sources wants 1 to 250")
		os.Exit(2)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	out := make([]outcome, *n)
	var wg sync.WaitGroup
	for i := range *n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := spec.Default()
			s.Duration, s.Interval = *secs, 0
			obs := &started{at: make(chan time.Time, 1)}
			turn := time.Now()
			_, err := session.RunClient(context.Background(), session.ClientConfig{ClientConfig: control.ClientConfig{
				Host: "127.0.0.1", Port: *port, Bind: "127.0.0." + strconv.Itoa(2+i%*sources),
				ConnectTimeout: 10 * time.Second, Spec: s, Logger: quiet,
			}, Observer: obs})
			o := outcome{err: err, answer: time.Since(turn)}
			select {
			case at := <-obs.at:
				o.served, o.answer = true, at.Sub(turn)
			default:
				o.refused = errors.Is(err, control.ErrRefused)
			}
			out[i] = o
		}()
	}
	wg.Wait()
	var served, refused []time.Duration
	var reason string
	other := 0
	for _, o := range out {
		switch {
		case o.served:
			served = append(served, o.answer)
		case o.refused:
			refused = append(refused, o.answer)
			reason = o.err.Error()
		default:
			other++
			fmt.Println("neither served nor refused:", o.err)
		}
	}
	fmt.Printf("clients %d: served %d, refused with a reason %d, other %d\n", *n, len(served), len(refused), other)
	late := report("served", served, *limit) + report("refused", refused, *limit)
	if reason != "" {
		fmt.Println("a refusal:", reason)
	}
	if other > 0 || late > 0 {
		fmt.Printf("FAIL: %d neither served nor refused, %d answered after %v\n", other, late, *limit)
		os.Exit(1)
	}
}

// report prints the answer times of one kind and counts the late ones.
func report(kind string, d []time.Duration, limit time.Duration) int {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	q := func(p float64) time.Duration { return d[min(len(d)-1, int(p*float64(len(d))))].Round(time.Millisecond) }
	late := len(d) - len(slices.DeleteFunc(slices.Clone(d), func(x time.Duration) bool { return x > limit }))
	fmt.Printf("%s: answered in median %v, p95 %v, slowest %v\n", kind, q(0.5), q(0.95), d[len(d)-1].Round(time.Millisecond))
	return late
}
