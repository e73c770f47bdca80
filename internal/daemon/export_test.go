package daemon

import "context"

// APIConns is the API's connection counts, for tests.
func (d *Daemon) APIConns() connCounts {
	if d.conns == nil {
		return connCounts{}
	}
	return d.conns.counts()
}

// SpoolCount is the results waiting in the spool, for tests.
func (d *Daemon) SpoolCount() int { return d.spool.count() }

// CloseQueue closes the job queue of a daemon that never ran.
func (d *Daemon) CloseQueue() { d.queue.Close() }

// Execute runs one planned run as a worker would, for tests.
func (d *Daemon) Execute(ctx context.Context, runID string) error { return d.execute(ctx, runID, 0) }

// NotTakenGrace is how long past its deadline a run may stay scheduled.
const NotTakenGrace = notTakenGrace

// HostGroups is hostGroups, for the grid's grouping test.
var HostGroups = hostGroups

// APIWork is the runs /api/schedule built and the requests abandoned
// because their client went, for tests.
func (d *Daemon) APIWork() (scheduleBuilt, abandoned int64) {
	return d.scheduleBuilt.Load(), d.abandoned.Load()
}

// quiet is the driver's kept answers, for tests.
func (q *riverQueue[TTx]) quiet() *quietPolls { return q.polls }
