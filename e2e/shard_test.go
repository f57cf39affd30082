package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/shard"
	"github.com/ptdmon/ptdmon/internal/testutil"
)

// TestShardMatchesPrometheusHashmod: for 2 and 3 shards, the targets
// ptdmon -shard i/N keeps are exactly those a real Prometheus keeps with
// the documented hashmod sharding recipe on __address__.
func TestShardMatchesPrometheusHashmod(t *testing.T) {
	t.Parallel()
	promBin := prometheusBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	var addrs []string
	for i := 0; i < 200; i++ {
		addrs = append(addrs, fmt.Sprintf("10.%d.%d.%d:%d", i%3, i/7, i%251, 8000+i%5))
	}
	var cfg strings.Builder
	cfg.WriteString("scrape_configs:\n")
	want := map[string]map[string]bool{} // job -> addresses
	for _, n := range []int{2, 3} {
		for i := 0; i < n; i++ {
			job := fmt.Sprintf("shard-%d-of-%d", i, n)
			// Never scraped during the test: only relabelling matters.
			fmt.Fprintf(&cfg, "  - job_name: %s\n    scrape_interval: 1h\n    static_configs:\n      - targets: [%s]\n", job, `"`+strings.Join(addrs, `", "`)+`"`)
			fmt.Fprintf(&cfg, "    relabel_configs:\n      - {source_labels: [__address__], modulus: %d, target_label: __tmp_hash, action: hashmod}\n", n)
			fmt.Fprintf(&cfg, "      - {source_labels: [__tmp_hash], regex: '%d', action: keep}\n", i)
			sh, err := shard.Parse(fmt.Sprintf("%d/%d", i, n))
			if err != nil {
				t.Fatal(err)
			}
			want[job] = map[string]bool{}
			for _, a := range addrs {
				if sh.Keep(a) {
					want[job][a] = true
				}
			}
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	promURL := startPrometheus(t, ctx, promBin, dir, filepath.Join(dir, "prometheus.yml"))

	var got map[string]map[string]bool
	testutil.Eventually(t, 20*time.Second, 500*time.Millisecond, func() (bool, string) {
		got = activeTargets(t, promURL)
		total := 0
		for _, m := range got {
			total += len(m)
		}
		return total == 2*len(addrs), fmt.Sprintf("Prometheus has %d active targets, want %d: %v", total, 2*len(addrs), got)
	})
	for job, w := range want {
		g := got[job]
		if len(g) != len(w) {
			t.Errorf("%s: Prometheus keeps %d targets, ptdmon %d", job, len(g), len(w))
		}
		for a := range w {
			if !g[a] {
				t.Errorf("%s: ptdmon keeps %s, Prometheus does not", job, a)
			}
		}
		for a := range g {
			if !w[a] {
				t.Errorf("%s: Prometheus keeps %s, ptdmon does not", job, a)
			}
		}
		t.Logf("%s: %d of %d targets", job, len(w), len(addrs))
	}
}

// activeTargets returns the addresses of Prometheus' active targets by job.
func activeTargets(t *testing.T, promURL string) map[string]map[string]bool {
	t.Helper()
	resp, err := http.Get(promURL + "/api/v1/targets?state=active")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			ActiveTargets []struct {
				Labels map[string]string `json:"labels"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	for _, at := range r.Data.ActiveTargets {
		job := at.Labels["job"]
		if out[job] == nil {
			out[job] = map[string]bool{}
		}
		out[job][at.Labels["instance"]] = true
	}
	return out
}
