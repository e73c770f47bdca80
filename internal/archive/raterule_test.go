package archive

import (
	"context"
	"testing"
	"time"
)

// A campaign stored before the rate rule was recorded reads back as
// upper-binary, the rule it was planned by; one stored now is decimal.
func TestCampaignRateRuleMigration(t *testing.T) {
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			// Back to schema 2: no rate_rule column, and a campaign
			// stored the way wireperf stored it then.
			for _, stmt := range []string{`ALTER TABLE sched_task DROP COLUMN mesh_group`, `DROP TABLE run_path`, `DROP TABLE run_figure`, `ALTER TABLE campaign DROP COLUMN rate_rule`, `DELETE FROM schema_version WHERE version > 2`} {
				if _, err := s.db.ExecContext(ctx, stmt); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.db.ExecContext(ctx, s.q(`INSERT INTO campaign (name, spec, spec_format, spec_sha256, order_seed, created)
				VALUES (?, ?, ?, ?, ?, ?)`), "old", `{"args":["--bitrate=1G","h"]}`, "flags", "x", 7, time.Now().UTC()); err != nil {
				t.Fatal(err)
			}
			s.Close()

			s = open(t, dsn)
			old, err := s.GetCampaign(ctx, "old")
			if err != nil || old.RateRule != RateRuleUpperBinary || old.Spec != `{"args":["--bitrate=1G","h"]}` {
				t.Fatalf("old campaign after the migration: %+v, %v; want rate rule %s and the spec as stored", old, err, RateRuleUpperBinary)
			}
			// Storing it again keeps the rule it was stored under.
			again, err := s.PutCampaign(ctx, Campaign{Name: "old", Spec: old.Spec, SpecFormat: "flags"})
			if err != nil || again.RateRule != RateRuleUpperBinary {
				t.Fatalf("PutCampaign over the old campaign = %+v, %v; want its rule %s kept", again, err, RateRuleUpperBinary)
			}
			fresh, err := s.PutCampaign(ctx, Campaign{Name: "new", Spec: old.Spec, SpecFormat: "flags"})
			if err != nil || fresh.RateRule != RateRuleDecimal {
				t.Fatalf("new campaign = %+v, %v; want rate rule %s", fresh, err, RateRuleDecimal)
			}
		})
	}
}
