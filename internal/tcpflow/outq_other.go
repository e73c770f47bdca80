//go:build !linux

package tcpflow

import "errors"

// Unacked is known on Linux only.
func (s *Stream) Unacked() (int, error) { return 0, errors.ErrUnsupported }
