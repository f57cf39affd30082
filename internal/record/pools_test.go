package record

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb/chunkenc"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// twoModelsOneEngine is one vLLM fleet serving two models: the scenario's
// model on a slow KV link (kv-bound's group) and a second model whose
// arrivals exceed its prefill compute (prefill-bound's group). Grouped by
// engine kind they are one group; as pools (docs/pools.md) each has its
// own bottleneck.
func twoModelsOneEngine(t *testing.T) sim.Scenario {
	t.Helper()
	kv, err := sim.LoadScenario("kv-bound")
	if err != nil {
		t.Fatal(err)
	}
	pf, err := sim.LoadScenario("prefill-bound")
	if err != nil {
		t.Fatal(err)
	}
	qwen := pf.Groups[0]
	qwen.Name, qwen.Model = "qwen", "Qwen/Qwen2.5-7B-Instruct"
	kv.Groups = []sim.Group{kv.Groups[0], qwen}
	return kv
}

// liveVerdict is the verdict the API serves now: the deployment's stage
// and each pool's.
type liveVerdict struct {
	stage string
	pools map[string]string
}

func askLive(t testing.TB, url string) liveVerdict {
	t.Helper()
	resp, err := http.Get(url + "/api/v1/snapshot")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var snap struct {
		Verdict struct {
			Stage  string `json:"stage"`
			Groups []struct {
				Group string `json:"group"`
				Stage string `json:"stage"`
			} `json:"groups"`
		} `json:"verdict"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
		t.Fatal(err)
	}
	v := liveVerdict{stage: snap.Verdict.Stage, pools: map[string]string{}}
	for _, g := range snap.Verdict.Groups {
		v.pools[g.Group] = g.Stage
	}
	return v
}

// TestRecordedVerdictIsTheLiveOne: the recorded ptd_bottleneck_stage and
// each pool's ptd_pool_bottleneck_stage are, tick by tick, what the live
// API said: on kv-bound (one model on two engine kinds: two pools), and
// with two models on one engine kind, limited by different stages.
func TestRecordedVerdictIsTheLiveOne(t *testing.T) {
	kvBound, err := sim.LoadScenario("kv-bound")
	if err != nil {
		t.Fatal(err)
	}
	f := func(name string, sc sim.Scenario, pools map[string]kvsize.Request, secs int, mustSee ...string) {
		t.Run(name, func(t *testing.T) { checkRecordedVerdicts(t, sc, pools, secs, mustSee) })
	}
	f("kv-bound", kvBound, nil, 60, "meta-llama/Llama-3.1-8B-Instruct (vllm) kv")
	two := twoModelsOneEngine(t)
	f("two models on vLLM", two, nil, 90,
		"meta-llama/Llama-3.1-8B-Instruct kv", "Qwen/Qwen2.5-7B-Instruct prefill")
	// Two pools on slow KV links, each with its own B_request, and half
	// the Llama pool's requests hitting half their prompt in decode's
	// prefix cache: its transfers carry 25% less than its B_request, and
	// the deployment's mixture of the two pools is off either B_request.
	// Each pool's transfers must be weighed against its own B_request
	// alone, live and recorded: the Qwen pool's are its B_request, and
	// its link is the limit.
	hits := kvBound
	qwen := hits.Groups[0]
	qwen.Name, qwen.Model, qwen.KVBytesPerRequest = "qwen", "Qwen/Qwen2.5-7B-Instruct", sim.LlamaKVBytes/2
	qwen.Transfer.BandwidthBytesPerSec /= 2
	llama := hits.Groups[0]
	llama.PrefixHit = sim.PrefixHitSpec{Fraction: 0.5}
	hits.Groups = []sim.Group{llama, qwen}
	own := map[string]kvsize.Request{
		hits.Model: {Bytes: hits.KVBytesPerRequest, Basis: kvsize.BasisSimulator},
		qwen.Model: {Bytes: qwen.KVBytesPerRequest, Basis: kvsize.BasisSimulator},
	}
	f("two models, own B_request, prefix hits", hits, own, 90, "Qwen/Qwen2.5-7B-Instruct kv")
}

// checkRecordedVerdicts records sc for secs seconds, asking the API for
// its verdict after every tick, and compares the recording with it. The
// run must reach each of mustSee ("POOL STAGE"), or the comparison proves
// little.
func checkRecordedVerdicts(t *testing.T, sc sim.Scenario, pools map[string]kvsize.Request, secs int, mustSee []string) {
	dir := t.TempDir()
	var srv *httptest.Server
	live := map[int64]liveVerdict{}
	pts := liveRunOf(t, dir, sc, secs, pools, (*Recorder).Close, func(l *ledger.Ledger) {
		if srv == nil {
			srv = httptest.NewServer((&api.Server{Ledger: l}).Handler())
		}
		p, _ := l.Latest()
		live[p.Time.UnixMilli()] = askLive(t, srv.URL)
	})
	srv.Close()
	run, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	deployment := recordedOnes(t, run, nameVerdict, func(ls labels.Labels) string { return ls.Get(labelStage) })
	recorded := recordedOnes(t, run, namePoolVerdict, func(ls labels.Labels) string { return ls.Get(labelPool) + "\x00" + ls.Get(labelStage) })
	seen := map[string]bool{}
	for i, p := range pts {
		ts := p.Time.UnixMilli()
		want := live[ts]
		if got := deployment[ts]; len(got) != 1 || got[0] != want.stage {
			t.Errorf("tick %d: recorded verdict %q, live %q", i, got, want.stage)
		}
		got := map[string]string{}
		for _, k := range recorded[ts] {
			pool, stage, _ := strings.Cut(k, "\x00")
			if _, dup := got[pool]; dup {
				t.Errorf("tick %d: pool %s has two stages", i, pool)
			}
			got[pool] = stage
		}
		if len(got) != len(want.pools) {
			t.Errorf("tick %d: recorded pools %v, live %v", i, got, want.pools)
		}
		for pool, stage := range want.pools {
			if got[pool] != stage {
				t.Errorf("tick %d: pool %s recorded %q, live %q", i, pool, got[pool], stage)
			}
			seen[pool+" "+stage] = true
		}
	}
	for _, want := range mustSee {
		if !seen[want] {
			t.Errorf("the live run never had %q; saw %v", want, seen)
		}
	}
}

// recordedOnes reads name's series and returns, by timestamp, the key of
// every series that is 1 there.
func recordedOnes(t *testing.T, run *Run, name string, key func(labels.Labels) string) map[int64][]string {
	t.Helper()
	q, err := run.src.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	out := map[int64][]string{}
	ss := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, name))
	for ss.Next() {
		k := key(ss.At().Labels())
		it := ss.At().Iterator(nil)
		for it.Next() == chunkenc.ValFloat {
			if ts, v := it.At(); v == 1 {
				out[ts] = append(out[ts], k)
			}
		}
	}
	if err := ss.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
