package cli

import (
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// A campaign stored when an upper-case rate was a power of 1024 sends, on
// resume, what it sent then: its 2M point runs with 2,097,152 bit/s.
func TestSweepResumeKeepsAStoredCampaignsRates(t *testing.T) {
	port := strconv.Itoa(startServer(t))
	db := filepath.Join(t.TempDir(), "a.db")
	file := filepath.Join(t.TempDir(), "c.yaml")
	spec := "name: rates\ntarget: 127.0.0.1\nport: " + port + "\norder: sequential\naxes:\n  bitrate: [1M, 2M]\nflags:\n  time: 0.5\n  udp: true\n"
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := runCLI("sweep", "-f", file, "--db", db, "-q"); code != ExitOK {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, stderr)
	}
	// runsWith counts the campaign's 2M runs whose command line holds arg.
	runsWith := func(arg string) int {
		t.Helper()
		conn, err := sql.Open("sqlite", db)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var n int
		err = conn.QueryRow(`SELECT COUNT(*) FROM run r JOIN run_axis a ON a.run_id = r.id
			WHERE r.campaign = 'rates' AND a.axis = 'bitrate' AND a.label = '2M' AND r.cmdline LIKE ?`, "%"+arg+"%").Scan(&n)
		if err != nil {
			t.Fatalf("the 2M runs: %v", err)
		}
		return n
	}
	if runsWith("--bitrate=2M") != 1 || runsWith("2097152") != 0 {
		t.Fatalf("a new campaign's 2M run: %d with 2M, %d with 2097152", runsWith("--bitrate=2M"), runsWith("2097152"))
	}
	// As if stored before the rule changed, with its 16K run to do again.
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`UPDATE campaign SET rate_rule = 'upper-binary' WHERE name = 'rates'`,
		`UPDATE run SET state = 'failed' WHERE campaign = 'rates' AND id IN (SELECT run_id FROM run_axis WHERE axis = 'bitrate' AND label = '2M')`,
	} {
		if _, err := conn.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	if code, out, stderr := runCLI("sweep", "--resume", "rates", "--db", db); code != ExitOK {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, stderr)
	}
	// (This campaign was planned under the new rule, so its points' IDs
	// differ under the old one and both run again; a campaign really
	// stored before keeps its IDs: internal/campaign's tests.)
	if runsWith("--bitrate=2097152") != 1 {
		t.Errorf("resumed under the old rule, no 2M run was given 2097152 bit/s")
	}
}
