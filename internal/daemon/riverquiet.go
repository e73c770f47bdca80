package daemon

import (
	"context"
	"sync"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
)

// queueSettingsEvery is how often a daemon's River reads its queue's
// settings and its running jobs' cancellations from the database.
const queueSettingsEvery = 5 * time.Minute

// quietDriver is River's driver as a daemon uses it: poll-only, and with
// two of its producer's polls read from the database once a
// queueSettingsEvery rather than every 2 s, which River fixes. They are
// its queue's settings (paused, metadata) and the cancellations of its
// running jobs; the daemon pauses no queue and cancels no job through
// River, so an operator's change (River's UI) takes effect within the
// interval. At 200 hosts the two polls were 200 transactions a second,
// 15 for each run (docs/scale.md).
//
// Its completions skip the jobs the daemon completed itself in the
// transaction that recorded their run (riverQueue.CompleteTx): River
// would complete each again in a transaction of its own, which changes
// nothing (the job is no longer running) but costs the database one
// transaction a run.
//
// It also says it has no listener, which is true of a poll-only client:
// River then inserts without a NOTIFY nobody hears, and wakes its own
// producer at once when the daemon queues a job on it, so the producer
// need not poll for jobs every second or two (fetchPoll).
type quietDriver[TTx any] struct {
	riverdriver.Driver[TTx]
	polls *quietPolls
}

func newQuietDriver[TTx any](d riverdriver.Driver[TTx], now func() time.Time) quietDriver[TTx] {
	return quietDriver[TTx]{Driver: d, polls: &quietPolls{every: queueSettingsEvery, now: now}}
}

func (d quietDriver[TTx]) SupportsListener() bool     { return false }
func (d quietDriver[TTx]) SupportsListenNotify() bool { return false }

func (d quietDriver[TTx]) GetExecutor() riverdriver.Executor {
	return quietExecutor{Executor: d.Driver.GetExecutor(), polls: d.polls}
}

// quietExecutor answers the two polls from quietPolls between reads.
type quietExecutor struct {
	riverdriver.Executor
	polls *quietPolls
}

func (e quietExecutor) QueueGet(ctx context.Context, p *riverdriver.QueueGetParams) (*rivertype.Queue, error) {
	return e.polls.queue(p.Name, func() (*rivertype.Queue, error) { return e.Executor.QueueGet(ctx, p) })
}

func (e quietExecutor) JobGetCancelRequested(ctx context.Context, p *riverdriver.JobGetCancelRequestedParams) ([]int64, error) {
	if !e.polls.cancelsDue() {
		return nil, nil
	}
	return e.Executor.JobGetCancelRequested(ctx, p)
}

// JobSetStateIfRunningMany is River's completion of worked jobs: those
// completed in their run's transaction already are answered with the
// row that transaction returned, and only the others are sent.
func (e quietExecutor) JobSetStateIfRunningMany(ctx context.Context, p *riverdriver.JobSetStateIfRunningManyParams) ([]*rivertype.JobRow, error) {
	done, rest := e.polls.takeCompleted(p)
	if rest == nil {
		return done, nil
	}
	rows, err := e.Executor.JobSetStateIfRunningMany(ctx, rest)
	if err != nil {
		// River tries the whole batch again.
		for _, r := range done {
			e.polls.completedInTx(r)
		}
		return nil, err
	}
	return append(done, rows...), nil
}

// quietPolls keeps the last answers and when they were read. A read
// that fails is not kept: the next poll asks again. It also keeps the
// jobs completed in their run's transaction until River completes them.
type quietPolls struct {
	every time.Duration
	now   func() time.Time

	mu         sync.Mutex
	queues     map[string]quietQueue
	lastCancel time.Time
	// completed are jobs completed in their run's transaction, by ID,
	// as that transaction left them; River completes each once its
	// worker returns, and the entry goes then.
	completed map[int64]*rivertype.JobRow
}

// completedInTx keeps a job completed in a committed transaction.
func (p *quietPolls) completedInTx(row *rivertype.JobRow) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.completed == nil {
		p.completed = map[int64]*rivertype.JobRow{}
	}
	p.completed[row.ID] = row
}

// takeCompleted splits River's completions: the rows of the jobs
// completed already (whatever state River now asks for: the committed
// completion stands, as with River's JobCompleteTx), and the parameters
// for the others, nil when there are none.
func (p *quietPolls) takeCompleted(in *riverdriver.JobSetStateIfRunningManyParams) ([]*rivertype.JobRow, *riverdriver.JobSetStateIfRunningManyParams) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.completed) == 0 {
		return nil, in
	}
	var done []*rivertype.JobRow
	rest := &riverdriver.JobSetStateIfRunningManyParams{Now: in.Now, Schema: in.Schema}
	for i, id := range in.ID {
		if row, ok := p.completed[id]; ok {
			delete(p.completed, id)
			done = append(done, row)
			continue
		}
		rest.ID = append(rest.ID, id)
		rest.Attempt = append(rest.Attempt, in.Attempt[i])
		rest.ErrData = append(rest.ErrData, in.ErrData[i])
		rest.FinalizedAt = append(rest.FinalizedAt, in.FinalizedAt[i])
		rest.MetadataDoMerge = append(rest.MetadataDoMerge, in.MetadataDoMerge[i])
		rest.MetadataUpdates = append(rest.MetadataUpdates, in.MetadataUpdates[i])
		rest.ScheduledAt = append(rest.ScheduledAt, in.ScheduledAt[i])
		rest.State = append(rest.State, in.State[i])
	}
	if len(done) == 0 {
		return nil, in
	}
	if len(rest.ID) == 0 {
		return done, nil
	}
	return done, rest
}

type quietQueue struct {
	q    *rivertype.Queue
	read time.Time
}

func (p *quietPolls) queue(name string, read func() (*rivertype.Queue, error)) (*rivertype.Queue, error) {
	now := p.now()
	p.mu.Lock()
	if c, ok := p.queues[name]; ok && now.Sub(c.read) < p.every && !now.Before(c.read) {
		p.mu.Unlock()
		return c.q, nil
	}
	p.mu.Unlock()
	q, err := read()
	if err != nil || q == nil {
		return q, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.queues == nil {
		p.queues = map[string]quietQueue{}
	}
	p.queues[name] = quietQueue{q: q, read: now}
	return q, nil
}

// cancelsDue says whether the cancellations are to be read now, and if
// so counts them read.
func (p *quietPolls) cancelsDue() bool {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.lastCancel.IsZero() && now.Sub(p.lastCancel) < p.every && !now.Before(p.lastCancel) {
		return false
	}
	p.lastCancel = now
	return true
}
