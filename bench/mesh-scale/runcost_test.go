package main

import "testing"

// Each statement the daemons ran in a measured run is named by the part
// of the daemon that ran it (texts as pg_stat_statements kept them).
func TestStatementSources(t *testing.T) {
	for q, want := range map[string]string{
		"begin":  "transaction begin/commit",
		"COMMIT": "transaction begin/commit",
		"-- name: JobGetAvailable :many WITH locked_jobs AS ( SELECT id":                              "River: fetching jobs",
		"-- name: JobInsertFastMany :many WITH raw_job_data AS ( SELECT":                              "River: inserting jobs",
		"-- name: JobSetStateIfRunningMany :many WITH job_input AS":                                   "River: completing jobs",
		"-- name: QueueGet :one SELECT name, created_at":                                              "River: maintenance and polls",
		"-- name: LeaderAttemptElect :one INSERT INTO river_leader":                                   "River: maintenance and polls",
		"SELECT id, name, source, dest FROM sched_task WHERE source = $1":                             "planning",
		"INSERT INTO sched_run (id, task_id, seq, source) VALUES ($1)":                                "planning",
		"SELECT id, task_id FROM sched_run WHERE source = $1 AND state IN ($2)":                       "planning",
		"INSERT INTO reservation (resource, lo, hi, run_id, class) VALUES ($1)":                       "a run's start",
		"UPDATE sched_run SET state = $1, reason = $2, updated = $3, actual_start = $4 WHERE id = $5": "a run's start",
		"UPDATE reservation SET hi = $1 WHERE run_id = $2 AND hi > $3 AND hi < $4":                    "leases",
		"UPDATE reservation SET hi = CASE WHEN lo > $1 THEN lo ELSE $2 END WHERE run_id = $3":         "a run's result",
		"UPDATE sched_run SET state = $1, reason = $2, updated = $3, ended = $4 WHERE id = $5":        "a run's result",
		"INSERT INTO run_summary (run_id, seconds) VALUES ($1, $2)":                                   "a run's result",
		"SELECT pg_advisory_xact_lock(hashtextextended($1, $2))":                                      "a run's result",
		"SELECT state, attempts FROM run WHERE id = $1 FOR UPDATE":                                    "a run's result",
		"SELECT 1": "other",
	} {
		if got := sourceOf(q); got != want {
			t.Errorf("%q: %q, want %q", q, got, want)
		}
	}
	if !isSampler("SELECT xact_commit + xact_rollback FROM pg_stat_database") || isSampler("begin") {
		t.Error("the harness's own statements told wrong")
	}
}
