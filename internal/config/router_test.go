package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// A router is a role: `role: router` in ptdmon.yaml and ptd_role="router"
// in file_sd, with the pool it serves from pool: or the pool label.
func TestRouterRole(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.json")
	if err := os.WriteFile(p, []byte(`[{"targets": ["10.0.0.9:9090"], "labels": {"ptd_role": "router", "ptd_engine": "llm-d-epp", "pool": "chat"}}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	ts, err := ReadFileSD([]FileSDEntry{{Files: []string{p}}})
	if err != nil || len(ts) != 1 {
		t.Fatalf("targets %+v, err %v", ts, err)
	}
	if err := ts[0].validate(); err != nil {
		t.Fatalf("file_sd router: %v", err)
	}
	got := ts[0].Resolve()
	if got.Role != engine.Router || got.Engine != engine.LLMDEPP {
		t.Errorf("file_sd router resolved to %+v", got)
	}
	if pool, labelled := ledger.PoolName(got.Labels, ""); pool != "chat" || !labelled {
		t.Errorf("file_sd router's pool %q (labelled %v), want chat", pool, labelled)
	}

	y := Target{Name: "fe", URL: "http://fe:8000/metrics", Role: "router", Pool: "chat"}
	if err := y.validate(); err != nil {
		t.Fatalf("role: router: %v", err)
	}
	if got := y.Resolve(); got.Role != engine.Router {
		t.Errorf("role: router resolved to %+v", got)
	}
}
