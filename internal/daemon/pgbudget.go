package daemon

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"

	"github.com/wireperf/wireperf/internal/archive"
)

// A daemon's PostgreSQL connections, whatever the mesh's size: a mesh of
// H hosts holds at most 2H, and behind PgBouncer far fewer. River's
// queue polls (no LISTEN, which holds a connection of its own and is
// session state) on one connection, and the archive has the other.
const (
	MaxPostgresConns = 2
	riverConns       = 1
	archiveConns     = MaxPostgresConns - riverConns
)

// poolerExecMode is how a daemon's statements are sent: with their
// description cached (so River's jsonb arguments are sent as jsonb, which
// simple_protocol and exec get wrong) but no named prepared statement,
// each execution one round trip of its own. A transaction-mode pooler
// (PgBouncer) may give every transaction another server connection,
// where a prepared statement (cache_statement, the driver's default) is
// unknown, and between the two round trips of describe_exec.
const poolerExecMode = "cache_describe"

var kvParam = regexp.MustCompile(`(?:^|\s)(default_query_exec_mode|application_name)\s*=\s*('(?:[^'\\]|\\.)*'|\S*)`)

// PoolerDSN is the daemon's PostgreSQL DSN as it uses it: safe behind a
// pooler in transaction mode (default_query_exec_mode=cache_describe,
// unless the DSN says simple_protocol or exec, which hold no session state
// either but which River's queue does not work with) and named
// "wireperf-daemon-HOST" in pg_stat_activity unless it names itself
// (application_name, or $PGAPPNAME). A DSN that asks for prepared
// statements, or anything else a pooler breaks, is refused in one line.
// An SQLite DSN is returned as it is.
func PoolerDSN(dsn, host string) (string, error) {
	if !archive.IsPostgres(dsn) {
		return dsn, nil
	}
	dsn = archive.PostgresDSN(dsn)
	params := map[string]string{}
	var u *url.URL
	if strings.Contains(dsn, "://") {
		var err error
		if u, err = url.Parse(dsn); err != nil {
			return "", fmt.Errorf("the archive's DSN: %v", archive.RedactSecrets(err.Error()))
		}
		for _, k := range []string{"default_query_exec_mode", "application_name"} {
			if u.Query().Has(k) {
				params[k] = u.Query().Get(k)
			}
		}
	} else {
		for _, m := range kvParam.FindAllStringSubmatch(dsn, -1) {
			params[m[1]] = strings.Trim(m[2], "'")
		}
	}
	add := map[string]string{}
	switch mode, given := params["default_query_exec_mode"]; {
	case !given:
		add["default_query_exec_mode"] = poolerExecMode
	case mode != poolerExecMode:
		return "", fmt.Errorf("the archive's DSN asks for default_query_exec_mode=%s: a daemon works behind a pooler in transaction mode (PgBouncer), "+
			"where a session's prepared statements are not kept, and its job queue needs its statements described; leave it out or give %s", mode, poolerExecMode)
	}
	if _, given := params["application_name"]; !given && os.Getenv("PGAPPNAME") == "" {
		add["application_name"] = "wireperf-daemon-" + host
	}
	if len(add) == 0 {
		return dsn, nil
	}
	if u != nil {
		q := u.Query()
		for k, v := range add {
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	for _, k := range []string{"default_query_exec_mode", "application_name"} {
		if v, ok := add[k]; ok {
			dsn += " " + k + "='" + strings.ReplaceAll(v, "'", `\'`) + "'"
		}
	}
	return dsn, nil
}
