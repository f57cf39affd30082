package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/journey"
)

// The verdict's examples are the requests in its window whose slowest
// phase, built so, is the named stage's, longest first.
func TestVerdictExamples(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	d := func(s float64) time.Duration { return time.Duration(s * 1e9) }
	l := journey.NewBook(0)
	type req struct {
		id             string
		at             float64 // arrival, seconds after t0
		q, pf, kv, dec float64
	}
	// Slowest phases: the d* decode, the p* prefill, k1 the KV transfer.
	reqs := []req{
		{"d1", 50, 0.1, 0.2, 0.1, 3},
		{"d2", 52, 0.1, 0.2, 0.1, 5},
		{"p1", 53, 0.1, 4, 0.1, 1},
		{"k1", 54, 0.1, 0.2, 2, 1},
		{"d3", 55, 0.1, 0.2, 0.1, 4},
		{"d4", 56, 0.1, 0.2, 0.1, 2},
		{"old", 1, 0.1, 0.2, 0.1, 9},   // ended before the window
		{"late", 70, 0.1, 0.2, 0.1, 9}, // arrived after the verdict
	}
	for _, r := range reqs {
		a := t0.Add(d(r.at))
		pEnd := a.Add(d(r.q + r.pf))
		l.Add(journey.Batch{Legs: []journey.Leg{
			{TraceID: "t" + r.id, RequestID: r.id, Pool: "a", Start: a, End: pEnd,
				Queue: r.q, TTFT: r.q + r.pf, Prefill: r.pf, Decode: 0, E2E: r.q + r.pf, MaxTokens: 1, PromptTokens: -1, CompletionTokens: -1},
			{TraceID: "t" + r.id, RequestID: r.id, Pool: "a", Start: pEnd, End: pEnd.Add(d(r.kv + r.dec)),
				Queue: r.kv, TTFT: r.kv + 0.01, Prefill: 0.01, Decode: r.dec - 0.01, E2E: r.kv + r.dec, MaxTokens: 100, PromptTokens: -1, CompletionTokens: -1},
		}})
	}
	s := &Server{Requests: l}
	f := func(class diagnose.Class, want ...string) {
		t.Helper()
		v := &diagnose.Verdict{Class: class, At: t0.Add(60 * time.Second), Window: 30}
		got := s.snapshotExamples(v)
		var ids []string
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		if len(ids) != len(want) {
			t.Fatalf("%s: examples %v, want %v", class, ids, want)
		}
		for i := range want {
			if ids[i] != want[i] {
				t.Errorf("%s: examples %v, want %v", class, ids, want)
			}
		}
	}
	f(diagnose.DecodeBound, "d2", "d3", "d1")
	f(diagnose.PrefillBound, "p1")
	f(diagnose.KVBound, "k1")
	f(diagnose.Balanced)
	f(diagnose.AdmissionBound)
	if (&Server{}).snapshotExamples(&diagnose.Verdict{Class: diagnose.DecodeBound, At: t0}) != nil {
		t.Error("examples without a request ledger")
	}

	// An example's link reads the one request.
	w := httptest.NewRecorder()
	s.requests(w, httptest.NewRequest(http.MethodGet, "/api/v1/requests?id=k1", nil))
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"total":1,`) || !strings.Contains(w.Body.String(), `"id":"k1"`) {
		t.Errorf("?id=k1: %d %s", w.Code, w.Body)
	}
}
