package report

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/advice/advicetest"
	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// TestVerdictsByPoolAreTheLiveOnes: two models on one engine kind, one
// limited by its KV link and one by its prefill, each with its own
// B_request. The report's verdict timeline, the deployment's class and
// each pool's, is at every point the one the live API gives over the same
// ledger: judged by pool, not by engine kind.
func TestVerdictsByPoolAreTheLiveOnes(t *testing.T) {
	kv, err := sim.LoadScenario("kv-bound")
	if err != nil {
		t.Fatal(err)
	}
	pf, err := sim.LoadScenario("prefill-bound")
	if err != nil {
		t.Fatal(err)
	}
	qwen := pf.Groups[0]
	qwen.Name, qwen.Model, qwen.KVBytesPerRequest = "qwen", "Qwen/Qwen2.5-7B-Instruct", sim.LlamaKVBytes/2
	kv.Groups = []sim.Group{kv.Groups[0], qwen}
	own := map[string]kvsize.Request{
		kv.Model:   {Bytes: kv.Groups[0].BytesPerRequest(kv), Basis: kvsize.BasisSimulator},
		qwen.Model: {Bytes: qwen.KVBytesPerRequest, Basis: kvsize.BasisSimulator},
	}
	res, err := advicetest.RunWith(kv, 3, 90*time.Second, advicetest.Options{PoolRequests: own})
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Meta: Meta{BRequest: kvsize.Request{Bytes: kv.KVBytesPerRequest}, Interval: time.Second, Window: 5 * time.Second,
		TargetPools: res.Ledger.Meta(), PoolRequests: own}, Points: res.Points}
	r, err := Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}

	srv := httptest.NewServer((&api.Server{Ledger: res.Ledger}).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/series?since=" + res.Points[0].Time.Add(-time.Millisecond).Format(time.RFC3339Nano))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var live struct {
		Verdicts []api.VerdictSpan `json:"verdicts"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&live); err != nil {
		t.Fatal(err)
	}

	type judged struct {
		class  diagnose.Class
		groups map[string]diagnose.Class
	}
	at := func(t time.Time, from, to func(i int) time.Time, n int, get func(i int) judged) (judged, bool) {
		for i := range n {
			if !t.Before(from(i)) && !t.After(to(i)) {
				return get(i), true
			}
		}
		return judged{}, false
	}
	seen := map[string]bool{}
	for _, p := range res.Points {
		want, ok := at(p.Time, func(i int) time.Time { return live.Verdicts[i].From }, func(i int) time.Time { return live.Verdicts[i].To },
			len(live.Verdicts), func(i int) judged { return judged{live.Verdicts[i].Class, live.Verdicts[i].Groups} })
		if !ok {
			t.Fatalf("the API's timeline has no span at %v", p.Time)
		}
		got, ok := at(p.Time, func(i int) time.Time { return r.Verdicts[i].From }, func(i int) time.Time { return r.Verdicts[i].To },
			len(r.Verdicts), func(i int) judged { return judged{r.Verdicts[i].Class, r.Verdicts[i].Groups} })
		if !ok {
			t.Fatalf("the report's timeline has no span at %v", p.Time)
		}
		if got.class != want.class || len(got.groups) != len(want.groups) {
			t.Errorf("at %v: report %s %v, live %s %v", p.Time.Sub(advicetest.Epoch), got.class, got.groups, want.class, want.groups)
			continue
		}
		for g, c := range want.groups {
			if got.groups[g] != c {
				t.Errorf("at %v: pool %s: report %s, live %s", p.Time.Sub(advicetest.Epoch), g, got.groups[g], c)
			}
			seen[g+" "+string(c)] = true
		}
	}
	// The comparison proves little unless the pools disagreed.
	for _, must := range []string{kv.Model + " kv", qwen.Model + " prefill"} {
		if !seen[must] {
			t.Errorf("the live run never had %q; saw %v", must, seen)
		}
	}
}
