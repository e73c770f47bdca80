package archive

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/version"
)

// migrations are the schema's versions, in order: migration i+1 is
// migrations[i]. The schema only ever grows: a migration adds tables,
// columns or indexes, and never removes or renames one, so that an older
// wireperf's queries keep working on a newer archive's data (migration 6
// rebuilds PostgreSQL's run table partitioned, with the same columns, and
// drops the references to it). Never edit a
// migration that has shipped; append a new one.
//
// The DDL is written once for both databases; {{TIME}} and {{BYTES}}
// become each one's type for instants and raw documents, and a statement
// that begins {{PG}} runs on PostgreSQL only.
//
// The schedule's tables (sched_task, sched_run, reservation: package
// taskstore's) are in this one list too, at the versions they shipped at
// (2, 7, 8, 9 and two indexes of 6): a database has one schema_version,
// which every wireperf reads to refuse a newer schema, and an archive
// written when one type kept both has them in this order.
var migrations = [][]string{
	{ // 1: runs, campaigns and what is stored beside a run
		`CREATE TABLE campaign (
			name        TEXT PRIMARY KEY,
			spec        TEXT NOT NULL,
			spec_format TEXT NOT NULL,
			spec_sha256 TEXT NOT NULL,
			order_seed  BIGINT NOT NULL,
			created     {{TIME}} NOT NULL
		)`,
		`CREATE TABLE run (
			id              TEXT PRIMARY KEY,
			campaign        TEXT REFERENCES campaign(name),
			point_key       TEXT NOT NULL DEFAULT '',
			rep             INTEGER NOT NULL DEFAULT 0,
			seq             INTEGER NOT NULL DEFAULT 0,
			state           TEXT NOT NULL,
			error           TEXT NOT NULL DEFAULT '',
			attempts        INTEGER NOT NULL DEFAULT 1,
			source          TEXT NOT NULL,
			source_file     TEXT NOT NULL DEFAULT '',
			source_sha256   TEXT NOT NULL DEFAULT '',
			tool_version    TEXT NOT NULL DEFAULT '',
			cmdline         TEXT NOT NULL DEFAULT '',
			local_host      TEXT NOT NULL DEFAULT '',
			remote_host     TEXT NOT NULL DEFAULT '',
			local_kernel    TEXT NOT NULL DEFAULT '',
			remote_kernel   TEXT NOT NULL DEFAULT '',
			started         {{TIME}},
			ended           {{TIME}},
			document        {{BYTES}},
			document_format TEXT NOT NULL DEFAULT '',
			rounded         INTEGER NOT NULL DEFAULT 0,
			recorded        {{TIME}} NOT NULL
		)`,
		`CREATE INDEX run_campaign ON run (campaign)`,
		`CREATE INDEX run_started ON run (started)`,
		`CREATE INDEX run_source_sha256 ON run (source_sha256)`,
		`CREATE TABLE run_axis (
			run_id TEXT NOT NULL REFERENCES run(id),
			axis   TEXT NOT NULL,
			num    DOUBLE PRECISION,
			label  TEXT NOT NULL,
			PRIMARY KEY (run_id, axis)
		)`,
		`CREATE TABLE run_summary (
			run_id         TEXT PRIMARY KEY REFERENCES run(id),
			seconds        DOUBLE PRECISION,
			sent_bytes     BIGINT,
			received_bytes BIGINT,
			sent_bps       DOUBLE PRECISION,
			received_bps   DOUBLE PRECISION,
			retransmits    BIGINT,
			min_rtt_ms     DOUBLE PRECISION,
			mean_rtt_ms    DOUBLE PRECISION,
			lost_percent   DOUBLE PRECISION,
			jitter_ms      DOUBLE PRECISION,
			rr_p50_us      DOUBLE PRECISION,
			rr_p99_us      DOUBLE PRECISION,
			out_of_order   BIGINT
		)`,
		`CREATE TABLE run_interval (
			run_id          TEXT NOT NULL REFERENCES run(id),
			idx             INTEGER NOT NULL,
			stream          INTEGER,
			sender_role     TEXT NOT NULL DEFAULT '',
			t_start         DOUBLE PRECISION NOT NULL,
			t_end           DOUBLE PRECISION NOT NULL,
			bytes           BIGINT,
			received_bytes  BIGINT,
			bits_per_second DOUBLE PRECISION,
			retransmits     BIGINT,
			snd_cwnd        BIGINT,
			rtt_us          DOUBLE PRECISION,
			packets         BIGINT,
			lost_packets    BIGINT,
			jitter_ms       DOUBLE PRECISION,
			omitted         INTEGER NOT NULL DEFAULT 0
		)`,
		`CREATE INDEX run_interval_run ON run_interval (run_id, idx)`,
		`CREATE TABLE host_state (
			run_id      TEXT NOT NULL REFERENCES run(id),
			host        TEXT NOT NULL,
			t           DOUBLE PRECISION NOT NULL,
			cpu_user    DOUBLE PRECISION,
			cpu_sys     DOUBLE PRECISION,
			cpu_softirq DOUBLE PRECISION,
			mem_used    BIGINT
		)`,
		`CREATE INDEX host_state_run ON host_state (run_id)`,
		`CREATE TABLE host_limits (
			run_id   TEXT NOT NULL REFERENCES run(id),
			host     TEXT NOT NULL,
			hostname TEXT NOT NULL DEFAULT '',
			kernel   TEXT NOT NULL DEFAULT '',
			limits   TEXT NOT NULL DEFAULT '',
			PRIMARY KEY (run_id, host)
		)`,
	},
	{ // 2: the schedule: tasks, their planned runs, and reservations
		`CREATE TABLE sched_task (
			id             TEXT PRIMARY KEY,
			name           TEXT NOT NULL,
			source         TEXT NOT NULL,
			dest           TEXT NOT NULL,
			dest_addr      TEXT NOT NULL DEFAULT '',
			args           TEXT NOT NULL,
			direction      TEXT NOT NULL,
			class          TEXT NOT NULL,
			duration_ms    BIGINT NOT NULL,
			start_at       {{TIME}} NOT NULL,
			repeat_ms      BIGINT NOT NULL DEFAULT 0,
			slip_ms        BIGINT NOT NULL DEFAULT 0,
			random_slip_ms BIGINT NOT NULL DEFAULT 0,
			until_at       {{TIME}},
			max_runs       INTEGER NOT NULL DEFAULT 0,
			paused         INTEGER NOT NULL DEFAULT 0,
			resources      TEXT NOT NULL DEFAULT '',
			thresholds     TEXT NOT NULL DEFAULT '',
			origin         TEXT NOT NULL DEFAULT '',
			created        {{TIME}} NOT NULL,
			updated        {{TIME}} NOT NULL
		)`,
		`CREATE INDEX sched_task_source ON sched_task (source)`,
		`CREATE INDEX sched_task_origin ON sched_task (origin)`,
		`CREATE TABLE sched_run (
			id           TEXT PRIMARY KEY,
			task_id      TEXT NOT NULL,
			seq          INTEGER NOT NULL,
			source       TEXT NOT NULL,
			dest         TEXT NOT NULL,
			test         TEXT NOT NULL,
			direction    TEXT NOT NULL,
			class        TEXT NOT NULL,
			planned      {{TIME}} NOT NULL,
			deadline     {{TIME}} NOT NULL,
			actual_start {{TIME}},
			ended        {{TIME}},
			state        TEXT NOT NULL,
			reason       TEXT NOT NULL DEFAULT '',
			updated      {{TIME}} NOT NULL
		)`,
		`CREATE INDEX sched_run_task ON sched_run (task_id, seq)`,
		`CREATE INDEX sched_run_pair ON sched_run (source, dest, test, direction, planned)`,
		`CREATE INDEX sched_run_planned ON sched_run (planned)`,
		`CREATE TABLE reservation (
			resource TEXT NOT NULL,
			lo       {{TIME}} NOT NULL,
			hi       {{TIME}} NOT NULL,
			run_id   TEXT NOT NULL,
			class    TEXT NOT NULL,
			PRIMARY KEY (run_id, resource)
		)`,
		`CREATE INDEX reservation_resource ON reservation (resource, lo)`,
		// PostgreSQL refuses overlapping exclusive reservations itself;
		// SQLite checks the same inside the reserving write transaction.
		`{{PG}}CREATE EXTENSION IF NOT EXISTS btree_gist`,
		`{{PG}}ALTER TABLE reservation ADD COLUMN during TSTZRANGE GENERATED ALWAYS AS (tstzrange(lo, hi, '[)')) STORED`,
		`{{PG}}ALTER TABLE reservation ADD CONSTRAINT reservation_exclusive
			EXCLUDE USING gist (resource WITH =, during WITH &&) WHERE (class = 'exclusive')`,
	},
	{ // 3: the rule a campaign's rates were read by. Campaigns stored
		// before it read an upper-case suffix as a power of 1024.
		`ALTER TABLE campaign ADD COLUMN rate_rule TEXT NOT NULL DEFAULT 'upper-binary'`,
	},
	{ // 4: a run's further figures by name (CPU of both ends, buffers granted, udpmon's achieved spacing)
		`CREATE TABLE run_figure (
			run_id TEXT NOT NULL REFERENCES run(id),
			name   TEXT NOT NULL,
			value  DOUBLE PRECISION NOT NULL,
			PRIMARY KEY (run_id, name)
		)`,
	},
	{ // 5: the path a trace run found, and whether it changed
		`CREATE TABLE run_path (
			run_id    TEXT PRIMARY KEY REFERENCES run(id),
			source    TEXT NOT NULL,
			dest      TEXT NOT NULL,
			test      TEXT NOT NULL DEFAULT '',
			at        {{TIME}} NOT NULL,
			path      TEXT NOT NULL,
			reached   INTEGER NOT NULL DEFAULT 0,
			changed   INTEGER NOT NULL DEFAULT 0,
			prev_path TEXT NOT NULL DEFAULT ''
		)`,
		`CREATE INDEX run_path_pair ON run_path (source, dest, test, at)`,
	},
	{ // 6: the planner at scale, and pruning old runs
		// A reservation check (resource = ? AND lo < to AND hi > from)
		// walks (resource, hi) from from upwards: the resource's
		// reservations in and after the window, not its whole history,
		// which (resource, lo) walks for lo < to.
		`CREATE INDEX reservation_resource_hi ON reservation (resource, hi)`,
		// The planner's own waiting runs (source = ? AND state = ?
		// AND planned < ?), without its finished ones.
		`CREATE INDEX sched_run_source_state ON sched_run (source, state, planned)`,
		// A campaign kept by archive prune, whatever its age.
		`ALTER TABLE campaign ADD COLUMN keep INTEGER NOT NULL DEFAULT 0`,
		// On PostgreSQL the run table is partitioned by the month it was
		// recorded in (see partition.go): its documents are most of an
		// archive's bytes, and a month is dropped whole when pruned.
		// A partitioned table's primary key holds its partition key, so
		// the children's references to run(id) go; the run and its
		// children are written and deleted together in one transaction.
		`{{PG}}ALTER TABLE run_axis DROP CONSTRAINT IF EXISTS run_axis_run_id_fkey`,
		`{{PG}}ALTER TABLE run_summary DROP CONSTRAINT IF EXISTS run_summary_run_id_fkey`,
		`{{PG}}ALTER TABLE run_interval DROP CONSTRAINT IF EXISTS run_interval_run_id_fkey`,
		`{{PG}}ALTER TABLE host_state DROP CONSTRAINT IF EXISTS host_state_run_id_fkey`,
		`{{PG}}ALTER TABLE host_limits DROP CONSTRAINT IF EXISTS host_limits_run_id_fkey`,
		`{{PG}}ALTER TABLE run_figure DROP CONSTRAINT IF EXISTS run_figure_run_id_fkey`,
		`{{PG}}ALTER TABLE run_path DROP CONSTRAINT IF EXISTS run_path_run_id_fkey`,
		`{{PG}}ALTER TABLE run RENAME TO run_unpartitioned`,
		`{{PG}}ALTER TABLE run_unpartitioned RENAME CONSTRAINT run_pkey TO run_unpartitioned_pkey`,
		`{{PG}}ALTER TABLE run_unpartitioned RENAME CONSTRAINT run_campaign_fkey TO run_unpartitioned_campaign_fkey`,
		`{{PG}}ALTER INDEX run_campaign RENAME TO run_unpartitioned_campaign`,
		`{{PG}}ALTER INDEX run_started RENAME TO run_unpartitioned_started`,
		`{{PG}}ALTER INDEX run_source_sha256 RENAME TO run_unpartitioned_source_sha256`,
		`{{PG}}CREATE TABLE run (
			id              TEXT NOT NULL,
			campaign        TEXT REFERENCES campaign(name),
			point_key       TEXT NOT NULL DEFAULT '',
			rep             INTEGER NOT NULL DEFAULT 0,
			seq             INTEGER NOT NULL DEFAULT 0,
			state           TEXT NOT NULL,
			error           TEXT NOT NULL DEFAULT '',
			attempts        INTEGER NOT NULL DEFAULT 1,
			source          TEXT NOT NULL,
			source_file     TEXT NOT NULL DEFAULT '',
			source_sha256   TEXT NOT NULL DEFAULT '',
			tool_version    TEXT NOT NULL DEFAULT '',
			cmdline         TEXT NOT NULL DEFAULT '',
			local_host      TEXT NOT NULL DEFAULT '',
			remote_host     TEXT NOT NULL DEFAULT '',
			local_kernel    TEXT NOT NULL DEFAULT '',
			remote_kernel   TEXT NOT NULL DEFAULT '',
			started         TIMESTAMPTZ,
			ended           TIMESTAMPTZ,
			document        BYTEA,
			document_format TEXT NOT NULL DEFAULT '',
			rounded         INTEGER NOT NULL DEFAULT 0,
			recorded        TIMESTAMPTZ NOT NULL,
			PRIMARY KEY (id, recorded)
		) PARTITION BY RANGE (recorded)`,
		`{{PG}}CREATE INDEX run_campaign ON run (campaign)`,
		`{{PG}}CREATE INDEX run_started ON run (started)`,
		`{{PG}}CREATE INDEX run_source_sha256 ON run (source_sha256)`,
		// One partition per month that holds runs already, then the rows.
		`{{PG}}DO $$
		DECLARE m TIMESTAMPTZ;
		BEGIN
			FOR m IN SELECT DISTINCT date_trunc('month', recorded, 'UTC') FROM run_unpartitioned LOOP
				EXECUTE format('CREATE TABLE %I PARTITION OF run FOR VALUES FROM (%L) TO (%L)',
					'run_' || to_char(m AT TIME ZONE 'UTC', 'YYYY_MM'),
					to_char(m AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"00:00:00"Z"'),
					to_char((m AT TIME ZONE 'UTC') + interval '1 month', 'YYYY-MM-DD"T"00:00:00"Z"'));
			END LOOP;
		END $$`,
		`{{PG}}INSERT INTO run SELECT * FROM run_unpartitioned`,
		`{{PG}}DROP TABLE run_unpartitioned`,
	},
	{ // 7: the mesh group a task's pair comes from, which the grid groups hosts by
		`ALTER TABLE sched_task ADD COLUMN mesh_group TEXT NOT NULL DEFAULT ''`,
	},
	{ // 8: a rotating task's destinations (a sampled group's partners of
		// one source over its rotation), a JSON list; '' for a task of one
		// destination, as every task stored before.
		`ALTER TABLE sched_task ADD COLUMN dests TEXT NOT NULL DEFAULT ''`,
	},
	{ // 9: the grid's cache of each pair's last run reads the runs changed since it last looked
		`CREATE INDEX sched_run_updated ON sched_run (updated)`,
	},
	{ // 10: the probes' (ping, tcp-connect) percentiles in columns of their
		// own. They were kept in rr_p50_us and rr_p99_us; a probe run is
		// known by the figure every one of its kind stores
		// (ping_duplicates, connect_refused), and its values move over.
		`ALTER TABLE run_summary ADD COLUMN probe_p50_us DOUBLE PRECISION`,
		`ALTER TABLE run_summary ADD COLUMN probe_p99_us DOUBLE PRECISION`,
		`UPDATE run_summary SET probe_p50_us = rr_p50_us, probe_p99_us = rr_p99_us, rr_p50_us = NULL, rr_p99_us = NULL
			WHERE run_id IN (SELECT run_id FROM run_figure WHERE name IN ('ping_duplicates', 'connect_refused'))`,
	},
}

// migrateOnlyTo, when not 0, stops the migrations at that version: the
// tests' way to make an archive as an older wireperf left it.
var migrateOnlyTo int

// SchemaVersion is the newest schema this wireperf knows.
func SchemaVersion() int { return len(migrations) }

// NewerSchemaError refuses a database that a newer wireperf wrote.
type NewerSchemaError struct {
	Have, Know int
	WrittenBy  string
}

func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("schema version %d (written by wireperf %s) is newer than this wireperf (%s) knows (version %d): upgrade wireperf",
		e.Have, e.WrittenBy, version.String(), e.Know)
}

func (s *Store) ddl(stmt string) string {
	t, b := "TIMESTAMP", "BLOB"
	if s.dialect == postgresDialect {
		t, b = "TIMESTAMPTZ", "BYTEA"
	}
	return strings.NewReplacer("{{TIME}}", t, "{{BYTES}}", b).Replace(stmt)
}

// migrate applies the missing migrations, each in its own transaction.
// Two processes opening a new archive at once both get a whole schema:
// PostgreSQL serialises them on an advisory lock, SQLite on its write
// lock (transactions begin IMMEDIATE).
func (s *Store) migrate(ctx context.Context) error {
	if err := s.createSchemaTable(ctx); err != nil {
		return fmt.Errorf("creating the schema table: %w", err)
	}
	for {
		done, err := s.migrateOne(ctx)
		if err != nil || done {
			return err
		}
	}
}

// migrationLock is the advisory lock key every migration step holds on
// PostgreSQL: an arbitrary constant ("wireperf" in ASCII digits).
const migrationLock = 8675309001

// createSchemaTable creates the version table if it is missing. On
// PostgreSQL two sessions running CREATE TABLE IF NOT EXISTS at once can
// both try to create it (one then fails on the catalogue's unique
// index), so it is created under the migrations' advisory lock.
func (s *Store) createSchemaTable(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.dialect == postgresDialect {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, s.ddl(`CREATE TABLE IF NOT EXISTS schema_version (
		version    INTEGER PRIMARY KEY,
		applied    {{TIME}} NOT NULL,
		applied_by TEXT NOT NULL
	)`)); err != nil {
		return err
	}
	return tx.Commit()
}

// migrateOne applies the next migration, if any; done says there was none.
func (s *Store) migrateOne(ctx context.Context) (done bool, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	if s.dialect == postgresDialect {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return false, err
		}
	}
	have, by, err := currentVersion(ctx, tx)
	if err != nil {
		return false, err
	}
	if have > len(migrations) {
		return false, &NewerSchemaError{Have: have, Know: len(migrations), WrittenBy: by}
	}
	if have == len(migrations) || (migrateOnlyTo > 0 && have >= migrateOnlyTo) {
		return true, nil
	}
	for _, stmt := range migrations[have] {
		if rest, pgOnly := strings.CutPrefix(stmt, "{{PG}}"); pgOnly {
			if s.dialect != postgresDialect {
				continue
			}
			stmt = rest
		}
		if _, err := tx.ExecContext(ctx, s.ddl(stmt)); err != nil {
			return false, fmt.Errorf("migration %d: %w", have+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_version (version, applied, applied_by) VALUES (?, ?, ?)`),
		have+1, time.Now().UTC(), version.String()); err != nil {
		return false, fmt.Errorf("migration %d: %w", have+1, err)
	}
	return false, tx.Commit()
}

func currentVersion(ctx context.Context, tx *sql.Tx) (int, string, error) {
	var v int
	var by string
	err := tx.QueryRowContext(ctx, `SELECT version, applied_by FROM schema_version ORDER BY version DESC LIMIT 1`).Scan(&v, &by)
	if err == sql.ErrNoRows {
		return 0, "", nil
	}
	return v, by, err
}
