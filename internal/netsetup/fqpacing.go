package netsetup

import (
	"fmt"

	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/spec"
)

// CheckUDPPacing refuses --fq-rate on a UDP sender whose interface (the
// one holding localAddr, the socket's "host:port") has no fq root qdisc:
// TCP paces itself to SO_MAX_PACING_RATE, but UDP is paced only by the
// fq qdisc, so without it the rate would be asked for and not kept. An
// interface whose qdisc cannot be read is let through.
func CheckUDPPacing(s spec.Spec, localAddr string) error {
	if s.Protocol != spec.UDP || s.FQRate <= 0 {
		return nil
	}
	addr, err := parseLocalAddr(localAddr)
	if err != nil {
		return nil
	}
	q, err := hostmon.ReadRootQdisc(addr)
	if err != nil || q.Kind == "fq" {
		return nil
	}
	return fmt.Errorf("--fq-rate: the kernel paces UDP only under the fq qdisc, and %s's root qdisc is %s (tc qdisc replace dev %s root fq)", q.Interface, q.Kind, q.Interface)
}
