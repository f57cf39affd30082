package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
)

// startPrometheus runs Prometheus on configFile with its storage in dir until
// the test ends, and returns its URL once it answers /-/ready.
func startPrometheus(t *testing.T, ctx context.Context, bin, dir, configFile string) string {
	t.Helper()
	addr := "127.0.0.1:" + freePort(t)
	startProc(t, ctx, bin, "--config.file="+configFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	u := "http://" + addr
	waitReady(t, u+"/-/ready")
	return u
}

// checkRulesHealthy fails the test for every generated rule whose last
// evaluation in Prometheus failed (/api/v1/rules: health "err" and its
// lastError), such as a recording that yields two series of one label
// set: promtool's unit tests feed chosen series, this is every series a
// real run exposes.
func checkRulesHealthy(t *testing.T, promURL string) {
	t.Helper()
	var body struct {
		Data struct {
			Groups []struct {
				Name  string `json:"name"`
				Rules []struct {
					Name      string `json:"name"`
					Health    string `json:"health"`
					LastError string `json:"lastError"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	getJSON(t, promURL+"/api/v1/rules", &body)
	n := 0
	for _, g := range body.Data.Groups {
		for _, r := range g.Rules {
			n++
			if r.Health == "err" || r.LastError != "" {
				t.Errorf("rule %s (group %s) failed in Prometheus: %s", r.Name, g.Name, r.LastError)
			}
		}
	}
	if n == 0 {
		t.Error("Prometheus has loaded no rules")
	}
}

// getJSON decodes the JSON answer of a GET of u into v, failing the test
// on any error.
func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}
