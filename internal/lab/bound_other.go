//go:build !linux

package lab

import "time"

// RTTBound: labs are Linux only.
func (w *RouterWatch) RTTBound() time.Duration { return 0 }
