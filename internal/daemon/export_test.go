package daemon

// APIConns is the API's open and shed connections, for tests.
func (d *Daemon) APIConns() (open, shed int) {
	if d.conns == nil {
		return 0, 0
	}
	return d.conns.counts()
}

// SpoolCount is the results waiting in the spool, for tests.
func (d *Daemon) SpoolCount() int { return d.spool.count() }

// CloseQueue closes the job queue of a daemon that never ran.
func (d *Daemon) CloseQueue() { d.queue.Close() }
