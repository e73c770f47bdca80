package emit

import (
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

// The CPU line names each end by its role, whichever end prints it: the
// server's report holds the server's end as its local one.
func TestRRCPUNamesEachEndByItsRole(t *testing.T) {
	clientEnd := result.End{Role: result.RoleClient, RR: &result.RR{},
		CPU: result.CPU{TotalPercent: 57.8, UserPercent: 11.1, SystemPercent: 46.7}}
	serverEnd := result.End{Role: result.RoleServer, RR: &result.RR{},
		CPU: result.CPU{TotalPercent: 48.1, UserPercent: 4.8, SystemPercent: 43.3}}
	const both = "CPU: client 57.8% (user 11.1%, system 46.7%), server 48.1% (user 4.8%, system 43.3%)"
	for _, c := range []struct {
		name string
		r    result.Result
		want string
	}{
		{"client's report", result.Result{Local: clientEnd, Remote: serverEnd}, both},
		{"server's report", result.Result{Local: serverEnd, Remote: clientEnd}, both},
		{"server's report, no client figures", result.Result{Local: serverEnd, Remote: result.End{Role: result.RoleClient}},
			"CPU: server 48.1% (user 4.8%, system 43.3%)"},
		{"client's report, no server figures", result.Result{Local: clientEnd, Remote: result.End{Role: result.RoleServer}},
			"CPU: client 57.8% (user 11.1%, system 46.7%)\n"},
	} {
		var text strings.Builder
		if err := (&RRText{W: &text}).Write(&c.r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), c.want) {
			t.Errorf("%s: want %q in:\n%s", c.name, c.want, text.String())
		}
	}
}
