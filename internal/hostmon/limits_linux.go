package hostmon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ReadLimits reads /proc/sys, which shows the current network namespace.
// Each value is read on its own: a file that is missing (a container's
// namespace hides net.core.rmem_max on some kernels) or malformed leaves
// its field zero and adds to the returned error, and the rest are still
// filled in, so callers can show what is known.
func ReadLimits() (Limits, error) { return readLimits("/proc/sys") }

func readLimits(root string) (Limits, error) {
	var l Limits
	var errs []error
	read := func(rel string, parse func([]byte) error) {
		path := filepath.Join(root, rel)
		data, err := os.ReadFile(path)
		if err == nil {
			err = parse(data)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
		}
	}
	intInto := func(dst *int64) func([]byte) error {
		return func(b []byte) (err error) { *dst, err = parseSysctlInt(b); return }
	}
	tripleInto := func(dst *[3]int64) func([]byte) error {
		return func(b []byte) (err error) { *dst, err = parseSysctlTriple(b); return }
	}
	wordInto := func(dst *string) func([]byte) error {
		return func(b []byte) (err error) { *dst, err = parseSysctlWord(b); return }
	}
	read("net/core/rmem_max", intInto(&l.RmemMax))
	read("net/core/wmem_max", intInto(&l.WmemMax))
	read("net/ipv4/tcp_rmem", tripleInto(&l.TCPRmem))
	read("net/ipv4/tcp_wmem", tripleInto(&l.TCPWmem))
	read("net/ipv4/tcp_congestion_control", wordInto(&l.Congestion))
	read("net/ipv4/tcp_allowed_congestion_control", func(b []byte) (err error) {
		l.AvailableCongestion, err = parseSysctlWords(b)
		return
	})
	read("net/core/default_qdisc", wordInto(&l.DefaultQdisc))
	return l, errors.Join(errs...)
}
