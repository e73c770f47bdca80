//go:build !linux

package tcpflow

import "os"

// memFile is an unlinked temporary file where memfd_create is missing.
func memFile() (*os.File, error) {
	f, err := os.CreateTemp("", "wireperf-zerocopy")
	if err != nil {
		return nil, err
	}
	_ = os.Remove(f.Name())
	return f, nil
}
