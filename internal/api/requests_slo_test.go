package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/slo"
)

// Requests built with a known longest phase: the misses are blamed on it,
// filtered by SLO and counted per pool.
func TestRequestsSLOMisses(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	d := func(s float64) time.Duration { return time.Duration(s * 1e9) }
	l := journey.NewBook(0)
	// id, pool, queue, prefill, wait for KV on decode, decode
	type req struct {
		id, pool       string
		q, pf, kv, dec float64
	}
	reqs := []req{
		{"q1", "a", 2, 0.3, 0.1, 1},   // ttft 2.4: queue
		{"p1", "a", 0.1, 1.5, 0.1, 1}, // ttft 1.7: prefill
		{"k1", "b", 0.1, 0.2, 1.2, 1}, // ttft 1.5: kv_transfer
		{"d1", "b", 0.1, 0.2, 0.1, 9}, // e2e 9.4: decode
		{"ok", "b", 0.1, 0.2, 0.1, 1}, // within both
		{"q2", "b", 3, 0.2, 0.1, 6},   // ttft 3.3: queue; e2e 9.3: decode
	}
	for i, r := range reqs {
		a := t0.Add(time.Duration(i) * time.Second)
		pEnd := a.Add(d(r.q + r.pf))
		l.Add(journey.Batch{Legs: []journey.Leg{
			{TraceID: "t" + r.id, RequestID: r.id, Pool: r.pool, Instance: "p0", Start: a, End: pEnd,
				Queue: r.q, TTFT: r.q + r.pf, Prefill: r.pf, Decode: 0, E2E: r.q + r.pf, MaxTokens: 1, PromptTokens: -1, CompletionTokens: -1},
			{TraceID: "t" + r.id, RequestID: r.id, Pool: r.pool, Instance: "d0", Start: pEnd, End: pEnd.Add(d(r.kv + r.dec)),
				Queue: r.kv, TTFT: r.kv + 0.01, Prefill: 0.01, Decode: r.dec - 0.01, E2E: r.kv + r.dec, MaxTokens: 100, PromptTokens: -1, CompletionTokens: -1},
		}})
	}
	s := &Server{Requests: l, SLO: slo.Thresholds{TTFT: 1, E2E: 8}}
	get := func(query string, code int) RequestsResponse {
		t.Helper()
		w := httptest.NewRecorder()
		s.requests(w, httptest.NewRequest(http.MethodGet, "/api/v1/requests?"+query, nil))
		if w.Code != code {
			t.Fatalf("%s: status %d (%s), want %d", query, w.Code, w.Body, code)
		}
		var resp RequestsResponse
		if code == http.StatusOK {
			if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
				t.Fatal(err)
			}
		}
		return resp
	}
	ids := func(r RequestsResponse) string {
		var out []string
		for _, q := range r.Requests {
			out = append(out, q.ID)
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	if got := ids(get("slo_miss=ttft", 200)); got != "k1,p1,q1,q2" {
		t.Errorf("ttft misses %s", got)
	}
	if got := ids(get("slo_miss=e2e&pool=b", 200)); got != "d1,q2" {
		t.Errorf("e2e misses of pool b %s", got)
	}
	all := get("", 200)
	want := MissSummary{
		"a": {"ttft": {"queue": 1, "prefill": 1}},
		"b": {"ttft": {"kv_transfer": 1, "queue": 1}, "e2e": {"decode": 2}},
	}
	if !reflect.DeepEqual(all.SLOMisses, want) {
		t.Errorf("summary %v, want %v", all.SLOMisses, want)
	}
	for _, r := range all.Requests {
		if r.ID == "q2" && (len(r.SLOMisses) != 2 || r.SLOMisses[0].Blame != journey.PhaseQueue || r.SLOMisses[1].Blame != journey.PhaseDecode) {
			t.Errorf("q2 misses %+v", r.SLOMisses)
		}
		if r.ID == "ok" && len(r.SLOMisses) != 0 {
			t.Errorf("ok misses %+v", r.SLOMisses)
		}
	}
	get("slo_miss=itl", 400)
	s.SLO = slo.Thresholds{E2E: 8}
	get("slo_miss=ttft", 400)
	if get("", 200).SLOMisses["a"] != nil {
		t.Error("pool a missed no e2e")
	}
}
