package udpmon

import (
	"fmt"
	"strings"
	"time"
)

// Bar renders a progress bar of width cells with the count and the time
// left, for a terminal line: "[#######.......]  12/40 points  ETA 1m05s".
func Bar(done, total int, eta time.Duration, width int) string {
	if total <= 0 {
		total = 1
	}
	done = min(max(done, 0), total)
	width = max(width, 1)
	fill := done * width / total
	left := "ETA " + eta.Round(time.Second).String()
	if done == total {
		left = "done"
	}
	return fmt.Sprintf("[%s%s] %d/%d points  %s", strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, total, left)
}
