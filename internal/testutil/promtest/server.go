package promtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Server is a Prometheus server a test started on a loopback port.
type Server struct {
	URL    string
	client *http.Client
}

// Require is the prometheus on PATH; without it the test is skipped. A
// test calls it before it makes what a skip would leave open (a daemon
// not yet run is closed only by its run).
func Require(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("no prometheus on PATH (Debian's package prometheus): the metrics are not tested against a real server")
	}
	return bin
}

// StartServer starts the prometheus on PATH (Debian's package
// `prometheus`) on a free loopback port with a storage of its own,
// scraping targets (host:port, /metrics) and evaluating ruleFiles every
// second, and stops it when the test ends. Without prometheus the test
// is skipped.
func StartServer(t testing.TB, targets, ruleFiles []string) *Server {
	t.Helper()
	bin := Require(t)
	dir := t.TempDir()
	quoted := func(ss []string) string {
		q := make([]string, len(ss))
		for i, s := range ss {
			q[i] = fmt.Sprintf("%q", s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: %s
scrape_configs:
  - job_name: wireperf
    static_configs:
      - targets: %s
`, quoted(ruleFiles), quoted(targets))
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeLoopbackPort(t)
	var logs bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-done
		if t.Failed() {
			t.Logf("prometheus's log:\n%s", logs.String())
		}
	})
	s := &Server{URL: "http://" + addr, client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("prometheus exited: %v\n%s", err, logs.String())
		default:
		}
		resp, err := s.client.Get(s.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready after 60 s: %v\n%s", err, logs.String())
		}
		time.Sleep(100 * time.Millisecond) // bounded poll: the server's readiness, until the deadline above
	}
}

// freeLoopbackPort is a loopback address whose port was free a moment ago.
func freeLoopbackPort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Sample is one series of a query's answer.
type Sample struct {
	Metric map[string]string
	Value  string
}

// get reads one API answer's data into out; an error answer is returned.
func (s *Server) get(path string, params url.Values, out any) error {
	resp, err := s.client.Get(s.URL + path + "?" + params.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	var env struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("%s: status %d: %s", path, resp.StatusCode, body)
	}
	if env.Status != "success" {
		return fmt.Errorf("%s: %s", path, env.Error)
	}
	return json.Unmarshal(env.Data, out)
}

// Query evaluates expr now, an instant query, and returns its series (a
// scalar answer is one series without labels).
func (s *Server) Query(expr string) ([]Sample, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := s.get("/api/v1/query", url.Values{"query": {expr}}, &data); err != nil {
		return nil, err
	}
	switch data.ResultType {
	case "vector":
		var rs []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(data.Result, &rs); err != nil {
			return nil, err
		}
		out := make([]Sample, len(rs))
		for i, r := range rs {
			out[i] = Sample{Metric: r.Metric, Value: fmt.Sprint(r.Value[1])}
		}
		return out, nil
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(data.Result, &v); err != nil {
			return nil, err
		}
		return []Sample{{Metric: map[string]string{}, Value: fmt.Sprint(v[1])}}, nil
	}
	return nil, fmt.Errorf("query %q: a %s answer", expr, data.ResultType)
}

// LabelValues are the values of label among the series match selects.
func (s *Server) LabelValues(label, match string) ([]string, error) {
	var out []string
	err := s.get("/api/v1/label/"+url.PathEscape(label)+"/values", url.Values{"match[]": {match}}, &out)
	return out, err
}

// Rule is one loaded rule as the rules API reports it.
type Rule struct {
	Name, Query, Type, Health, LastError string
	Annotations                          map[string]string
	LastEvaluation                       time.Time
}

// Rules are the loaded rules of every group.
func (s *Server) Rules() ([]Rule, error) {
	var data struct {
		Groups []struct {
			Rules []Rule `json:"rules"`
		} `json:"groups"`
	}
	if err := s.get("/api/v1/rules", url.Values{}, &data); err != nil {
		return nil, err
	}
	var out []Rule
	for _, g := range data.Groups {
		out = append(out, g.Rules...)
	}
	return out, nil
}

// CheckMetrics runs `promtool check metrics` on a scrape's body and
// returns what it found wrong ("" when nothing); without promtool the
// test is skipped.
func CheckMetrics(t testing.TB, body []byte) string {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("no promtool on PATH (Debian's package prometheus)")
	}
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil && len(out) == 0 {
		return err.Error()
	}
	return strings.TrimSpace(string(out))
}
