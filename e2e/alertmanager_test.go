package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/gen"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/testutil"
)

// kvAlert is the generated alert a KV-bound run must raise.
const kvAlert = "PTDKVTransferLagging"

// alertSpeed runs the simulator fast enough for steady rates, slowly
// enough that kv-bound's prefill keeps outrunning the KV link (until its
// KV slots fill, 60 s of wall time at this speed) while the alert fires.
const alertSpeed = 2

// webhook is Alertmanager's receiver: it keeps every notification.
type webhook struct {
	mu   sync.Mutex
	msgs []amMessage
}

type amMessage struct {
	Status string `json:"status"`
	Alerts []struct {
		Status      string            `json:"status"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"alerts"`
}

func (w *webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	var m amMessage
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	w.msgs = append(w.msgs, m)
	w.mu.Unlock()
}

// find returns the annotations of the newest notification of alert name
// with the given status.
func (w *webhook) find(name, status string) (map[string]string, map[string]string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.msgs) - 1; i >= 0; i-- {
		for _, a := range w.msgs[i].Alerts {
			if a.Labels["alertname"] == name && a.Status == status {
				return a.Labels, a.Annotations, true
			}
		}
	}
	return nil, nil, false
}

// writeFileSD points Prometheus at the simulator's engines, atomically.
func writeFileSD(t *testing.T, path string, cl *sim.Cluster) {
	t.Helper()
	type group struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	var gs []group
	for _, tg := range cl.Targets() {
		u, err := url.Parse(tg.URL)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, group{Targets: []string{u.Host}, Labels: map[string]string{
			"ptd_name": tg.Name, "ptd_role": string(tg.Role), "ptd_engine": string(tg.Engine), "__metrics_path__": u.Path,
		}})
	}
	b, err := json.Marshal(gs)
	if err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestAlertmanagerKVBound: Prometheus 2.42 scrapes a kv-bound simulated
// cluster with the generated configuration and evaluates the generated
// rules; the KV-lag alert reaches a real Alertmanager, which delivers it to
// a webhook on loopback with its summary and runbook. When the scenario
// ends (the engines are replaced by a balanced cluster under the same
// names), the alert resolves.
//
// The alert's expression, labels and annotations are the generated ones;
// only its hold time (for) is shortened, so the test stays bounded.
//
// It runs beside this package's other parallel tests, which wait on the
// wall clock far more than they compute (the rate comparisons a loaded
// machine would disturb are not among them): the alert must fire before
// kv-bound's KV slots fill (alertSpeed), and it fires after 20 to 26 s
// alone or beside them (35 s once beside another whole run), within the
// 50 s allowed.
func TestAlertmanagerKVBound(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the Alertmanager run (about a minute)")
	}
	promBin := prometheusBin(t)
	amBin := needBin(t, "prometheus-alertmanager", "prometheus-alertmanager")
	ctx, cancel := context.WithTimeout(context.Background(), 115*time.Second)
	defer cancel()
	dir := t.TempDir()

	hook := &webhook{}
	hookSrv := httptest.NewServer(hook)
	defer hookSrv.Close()
	amAddr := "127.0.0.1:" + freePort(t)
	amCfg := fmt.Sprintf(`route:
  receiver: hook
  group_by: [alertname]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: hook
    webhook_configs:
      - url: %s/
        send_resolved: true
`, hookSrv.URL)
	if err := os.WriteFile(filepath.Join(dir, "alertmanager.yml"), []byte(amCfg), 0o644); err != nil {
		t.Fatal(err)
	}
	startProc(t, ctx, amBin, "--config.file="+filepath.Join(dir, "alertmanager.yml"),
		"--storage.path="+filepath.Join(dir, "am"), "--web.listen-address="+amAddr,
		"--cluster.listen-address=", "--log.level=warn")
	waitReady(t, "http://"+amAddr+"/-/ready")

	start := func(name string) *sim.Cluster {
		sc, err := sim.LoadScenario(name)
		if err != nil {
			t.Fatal(err)
		}
		cl, err := sim.Start(ctx, sc, sim.Options{Seed: 3, Speed: alertSpeed, Logger: quietLog()})
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	cl := start("kv-bound")
	defer func() { cl.Close() }()
	sdFile := filepath.Join(dir, "engines.json")
	writeFileSD(t, sdFile, cl)

	in := gen.Input{FileSD: []string{sdFile}, PtdmonAddr: "127.0.0.1:" + freePort(t), Window: window,
		KVBytesPerRequest: cl.BytesPerRequest(), RuleFiles: []string{"rules.yml"}}
	promCfg, err := gen.PrometheusConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	promCfg = append(promCfg, fmt.Sprintf("alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: [%q]\n", amAddr)...)
	rules := gen.Rules(in)
	var want map[string]string
	for gi := range rules.Groups {
		for ri := range rules.Groups[gi].Rules {
			if r := &rules.Groups[gi].Rules[ri]; r.Alert == kvAlert {
				r.For = "10s"
				want = r.Annotations
			}
		}
	}
	if want == nil {
		t.Fatalf("the generated rules have no %s alert", kvAlert)
	}
	rulesYAML, err := rules.YAML()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"prometheus.yml": promCfg, "rules.yml": rulesYAML} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	startPrometheus(t, ctx, promBin, dir, filepath.Join(dir, "prometheus.yml"))

	wait := func(status string, within time.Duration) (map[string]string, map[string]string) {
		t.Helper()
		var l, a map[string]string
		testutil.Eventually(t, within, 500*time.Millisecond, func() (bool, string) {
			var ok bool
			l, a, ok = hook.find(kvAlert, status)
			return ok, fmt.Sprintf("%s not %s at the webhook", kvAlert, status)
		})
		return l, a
	}
	began := time.Now()
	labels, ann := wait("firing", 50*time.Second)
	t.Logf("%s firing after %s: %v", kvAlert, time.Since(began).Round(time.Second), ann)
	if labels["path"] != "engines" || labels["severity"] == "" {
		t.Errorf("firing alert labels %v: want path=engines and a severity", labels)
	}
	if ann["runbook"] != want["runbook"] {
		t.Errorf("runbook %q, generated %q", ann["runbook"], want["runbook"])
	}
	if s := ann["summary"]; s == "" || strings.Contains(s, "{{") || !strings.Contains(s, "engines") {
		t.Errorf("summary %q: want the generated template filled in for path engines (%q)", s, want["summary"])
	}
	// Alertmanager's own API holds it too.
	resp, err := http.Get("http://" + amAddr + "/api/v2/alerts?filter=alertname%3D%22" + kvAlert + "%22")
	if err != nil {
		t.Fatal(err)
	}
	var active []struct {
		Annotations map[string]string `json:"annotations"`
	}
	err = json.NewDecoder(resp.Body).Decode(&active)
	resp.Body.Close()
	if err != nil || len(active) == 0 || active[0].Annotations["runbook"] != want["runbook"] {
		t.Errorf("/api/v2/alerts: %v, %+v: want the active %s with its runbook", err, active, kvAlert)
	}

	// The scenario ends: balanced engines under the same names.
	cl.Close()
	cl = start("balanced")
	writeFileSD(t, sdFile, cl)
	ended := time.Now()
	wait("resolved", 60*time.Second)
	t.Logf("%s resolved %s after the scenario ended", kvAlert, time.Since(ended).Round(time.Second))
}
