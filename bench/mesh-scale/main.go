// Command mesh-scale runs a mesh of virtual hosts against one PostgreSQL,
// in one process: each host is the daemon's own code (its planner, River
// worker, reservations and archive writes) with a no-op test that takes
// its planned time and stores a synthetic result. It reports the
// schedule's lag, overlaps and missed runs from the archive, and what
// PostgreSQL and the harness itself spent. docs/scale.md describes it.
//
//	go run ./bench/mesh-scale -hosts 200 -minutes 3 -dsn postgres://…
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"
)

func main() {
	var o Options
	minutes := flag.Float64("minutes", 3, "how long the schedule runs, in minutes")
	asJSON := flag.Bool("json", false, "print the report as JSON")
	flag.IntVar(&o.Hosts, "hosts", 100, "virtual hosts")
	flag.StringVar(&o.DSN, "dsn", os.Getenv("WIREPERF_DB"), "PostgreSQL DSN (default $WIREPERF_DB)")
	flag.BoolVar(&o.NewDB, "new-db", true, "run in a new database of the DSN's cluster, dropped after (needs CREATEDB); false: the DSN's own, which must hold no runs")
	flag.BoolVar(&o.KeepDB, "keep-db", false, "keep the new database after the run")
	flag.Uint64Var(&o.Draw, "draw", 1, "which draw of sampled partners (the same draw, the same partners)")
	flag.DurationVar(&o.ProbeRandomSlip, "probe-random-slip", 0, "the probes' random_slip: spreads each minute's probes over this long (0: all on the minute, as a mesh file's default; under 1m)")
	flag.IntVar(&o.ArchiveConns, "archive-conns", 1, "cap of each daemon's archive pool (0: the daemon's own)")
	flag.IntVar(&o.Workers, "workers", 0, "each daemon's runs at once (0: the daemon's default)")
	flag.IntVar(&o.PgBouncer, "pgbouncer", 0, "put a PgBouncer (transaction mode) with this many server connections between the daemons and PostgreSQL (0: none)")
	flag.IntVar(&o.QueueMaintainers, "queue-maintainers", 0, "daemons that take part in River's leader election (0: all)")
	flag.StringVar(&o.Log, "log", "", "write the daemons' warnings to this file")
	quiet := flag.Bool("q", false, "no progress on stderr")
	flag.Parse()
	switch {
	case flag.NArg() > 0:
		fail("unexpected argument %q", flag.Arg(0))
	case o.DSN == "":
		fail("-dsn: missing (a PostgreSQL DSN)")
	case o.Hosts < 2:
		fail("-hosts %d: want at least 2", o.Hosts)
	case *minutes <= 0:
		fail("-minutes %g: want more than 0", *minutes)
	case o.ProbeRandomSlip < 0 || o.ProbeRandomSlip >= probeTest.repeat:
		fail("-probe-random-slip %v: want 0 up to %v", o.ProbeRandomSlip, probeTest.repeat)
	case o.ArchiveConns < 0 || o.Workers < 0 || o.PgBouncer < 0 || o.QueueMaintainers < 0:
		fail("-archive-conns, -workers, -pgbouncer and -queue-maintainers: want 0 or more")
	}
	o.Length = time.Duration(*minutes * float64(time.Minute))
	if !*quiet {
		o.Progress = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mesh-scale:", err)
		os.Exit(1)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
		return
	}
	rep.Markdown(os.Stdout)
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "mesh-scale: "+format+"\n", a...)
	os.Exit(2)
}
