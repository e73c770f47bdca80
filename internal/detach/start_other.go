//go:build !unix

package detach

import "time"

// Start is refused where there are no sessions to detach into.
func Start(time.Duration) (int, error) { return 0, ErrUnsupported }
