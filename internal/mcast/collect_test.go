package mcast

import "context"

// collect drains events until ctx is done or the channel closes.
func collect(ctx context.Context, ch <-chan FlowEvent) []FlowEvent {
	var out []FlowEvent
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, e)
		case <-ctx.Done():
			return out
		}
	}
}
