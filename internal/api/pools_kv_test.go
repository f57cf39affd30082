package api

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
)

// TestSnapshotPoolKVTransfers: two pools with their own B_request, the
// vLLM one with half its requests hitting half their prompt in decode's
// prefix cache. Each pool's kv.transfers_per_second is its own instances'
// transfers over W, as the simulator's truth counts them; the pool with
// hits says that its KV req/s is bytes ÷ B_request, with its bytes per
// transfer, and the pool whose transfers carry its B_request says nothing.
func TestSnapshotPoolKVTransfers(t *testing.T) {
	sc, err := sim.LoadScenario("balanced")
	if err != nil {
		t.Fatal(err)
	}
	sc.Groups[0].PrefixHit = sim.PrefixHitSpec{Fraction: 0.5}
	qwen := &sc.Groups[1]
	qwen.Model, qwen.KVBytesPerRequest = "Qwen/Qwen2.5-7B-Instruct", sim.LlamaKVBytes/2
	own := map[string]kvsize.Request{sc.Model: {Bytes: sc.KVBytesPerRequest, Basis: "config"}, qwen.Model: {Bytes: qwen.KVBytesPerRequest, Basis: "config"}}
	r, err := simtest.RunWith(sc, 2, 90*time.Second, simtest.Options{PoolRequests: own})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer((&Server{Ledger: r.Ledger}).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/snapshot?instances=0")
	if err != nil {
		t.Fatal(err)
	}
	var snap struct {
		Pools []struct {
			Name string `json:"name"`
			KV   struct {
				Transfers *float64          `json:"transfers_per_second"`
				Bytes     *float64          `json:"bytes_per_second_window"`
				Absent    map[string]string `json:"absent"`
			} `json:"kv"`
			KVNote string `json:"kv_note"`
		} `json:"pools"`
	}
	err = json.NewDecoder(resp.Body).Decode(&snap)
	resp.Body.Close()
	if err != nil || len(snap.Pools) != 2 {
		t.Fatalf("%v: %d pools", err, len(snap.Pools))
	}
	// The oracle: transfers the simulator counted on each group's instances
	// between the window's first and last scrapes (86 s and 90 s).
	from, to := r.Model.TruthAt(86*time.Second), r.Model.TruthAt(90*time.Second)
	group := map[string]string{sc.Model: "vllm-", qwen.Model: "sglang-"}
	for _, p := range snap.Pools {
		var n int64
		for _, in := range to.Instances {
			if strings.HasPrefix(in.Name, group[p.Name]) {
				n += in.Exported.KVTransfers - from.Instance(in.Name).Exported.KVTransfers
			}
		}
		want := float64(n) / 4
		if want <= 0 {
			t.Fatalf("pool %s: the simulator counted no transfer in the window", p.Name)
		}
		if p.KV.Transfers == nil || math.Abs(*p.KV.Transfers-want) > 1e-9 {
			t.Errorf("pool %s: transfers/s %v (%q), want %g", p.Name, p.KV.Transfers, p.KV.Absent["transfers_per_second"], want)
		}
	}
	for _, p := range snap.Pools {
		switch p.Name {
		case sc.Model:
			if !strings.Contains(p.KVNote, "off B_request: KV req/s is KV bytes ÷ B_request, not a request count") {
				t.Errorf("pool %s with prefix hits: note %q", p.Name, p.KVNote)
			}
		default:
			if p.KVNote != "" {
				t.Errorf("pool %s without prefix hits: note %q, want none", p.Name, p.KVNote)
			}
		}
	}
}

// TestTargetPoolMetric: /metrics has ptd_target_pool for every target whose
// pool a label names (ptd_pool, or pool), with that pool, and none for a
// target whose pool is its model (the rules name that one by the model).
func TestTargetPoolMetric(t *testing.T) {
	srv := httptest.NewServer((&Server{Ledger: twoPools(t, ledger.Config{})}).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"qwen-p0": "qwen", "qwen-d0": "qwen"}
	for target, pool := range want {
		line := fmt.Sprintf("ptd_target_pool{pool=%q,target=%q} 1\n", pool, target)
		if !strings.Contains(string(body), line) {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	if n := strings.Count(string(body), "ptd_target_pool{"); n != len(want) {
		t.Errorf("%d ptd_target_pool series, want %d", n, len(want))
	}
}
