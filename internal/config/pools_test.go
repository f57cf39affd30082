package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

func TestPools(t *testing.T) {
	c, err := Parse([]byte(`
pools:
  llama-70b: {kv_bytes_per_request: 1342177280}
  llama-8b:
    model: {config: ../kvsize/testdata/llama-3.1-8b/config.json, seq_len: 8192}
targets:
  - name: p0
    url: http://10.0.0.1:8000/metrics
    pool: llama-70b
    labels: {rack: a}
  - name: d0
    url: http://10.0.0.2:8000/metrics
`), "ptdmon.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	got, err := c.PoolRequests()
	if err != nil {
		t.Fatal(err)
	}
	// The oracle: kvsize's own computation of the same config.
	want8b, err := kvsize.Resolve(0, kvsize.BasisConfig, "../kvsize/testdata/llama-3.1-8b/config.json", kvsize.Options{SeqLen: 8192})
	if err != nil {
		t.Fatal(err)
	}
	if r := got["llama-70b"]; r.Bytes != 1342177280 || r.Basis != kvsize.BasisConfig {
		t.Errorf("llama-70b: %+v", r)
	}
	if r := got["llama-8b"]; r.Bytes != want8b.Bytes || r.Bytes <= 0 || r.Basis != kvsize.BasisModelConfig {
		t.Errorf("llama-8b: %+v, want %d bytes from the model config", r, want8b.Bytes)
	}
	p0 := c.Targets[0].Resolve()
	if p0.Labels[ledger.LabelPool] != "llama-70b" || p0.Labels["rack"] != "a" {
		t.Errorf("p0 labels %v: want ptd_pool=llama-70b beside rack=a", p0.Labels)
	}
	if c.Targets[0].Labels[ledger.LabelPool] != "" {
		t.Error("Resolve wrote into the configuration's own labels")
	}
	if d0 := c.Targets[1].Resolve(); d0.Labels != nil {
		t.Errorf("d0 without a pool has labels %v", d0.Labels)
	}
}

func TestPoolErrors(t *testing.T) {
	f := func(yaml, want string) {
		t.Helper()
		c, err := Parse([]byte(yaml+"targets: [{url: 'http://a:1/m'}]\n"), "ptdmon.yaml")
		if err == nil {
			c.SetDefaults()
			err = c.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one with %q for:\n%s", err, want, yaml)
		}
	}
	f("pools:\n  a: {}\n", "ptdmon.yaml:1: pools: a: set kv_bytes_per_request or model.config")
	f("pools:\n  a: {kv_bytes_per_request: -1}\n", "pools: a: kv_bytes_per_request must be positive")
	f("pools:\n  a: {kv_bytes_per_request: 5, model: {config: c.json, seq_len: 1}}\n", "pools: a: set kv_bytes_per_request or model.config, not both")
	f("pools:\n  a: {model: {config: c.json}}\n", "pools: a: model.seq_len must be > 0")
	f("pools:\n  a: {kv_bytes: 5}\n", "field kv_bytes not found")
}

func TestTargetPoolKey(t *testing.T) {
	_, err := Parse([]byte("targets:\n  - {url: 'http://b:1/m', pol: x}\n"), "ptdmon.yaml")
	if err == nil || !strings.Contains(err.Error(), "field pol not found in target (want name, url, role, engine, pool,") {
		t.Errorf("error %v, want the target's keys with pool among them", err)
	}
}

func TestPoolFromFileSD(t *testing.T) {
	// file_sd's pool and ptd_pool labels reach the target's labels, which
	// name its pool.
	p := filepath.Join(t.TempDir(), "sd.json")
	if err := os.WriteFile(p, []byte(`[{"targets": ["10.0.0.1:8000"], "labels": {"ptd_role": "prefill", "pool": "chat"}},
	{"targets": ["10.0.0.2:8000"], "labels": {"ptd_role": "decode", "ptd_pool": "chat"}}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	ts, err := ReadFileSD([]FileSDEntry{{Files: []string{p}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 {
		t.Fatalf("%d targets, want 2", len(ts))
	}
	for _, tt := range ts {
		if pool, labelled := ledger.PoolName(tt.Resolve().Labels, "meta-llama/Llama-3.1-8B"); pool != "chat" || !labelled {
			t.Errorf("%s: pool %q (labelled %v), want chat", tt.Name, pool, labelled)
		}
	}
}
