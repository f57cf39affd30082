package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/journey"
)

func TestRequestsAPI(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	l := journey.NewBook(0)
	for i := range 5 {
		a := t0.Add(time.Duration(i) * time.Second)
		id := string(rune('a' + i))
		q := 0.1 * float64(i)
		pEnd := a.Add(time.Duration((q + 0.21) * 1e9))
		l.Add(journey.Batch{Legs: []journey.Leg{
			{TraceID: "t" + id, RequestID: id, Pool: "llama", Instance: "p0", Start: a, End: pEnd,
				Queue: q, TTFT: q + 0.2, Prefill: 0.2, Decode: 0, MaxTokens: 1, PromptTokens: 10, CompletionTokens: 1},
			{TraceID: "t" + id, RequestID: id, Pool: "llama", Instance: "d0", Start: pEnd.Add(50 * time.Millisecond), End: pEnd.Add(1120 * time.Millisecond),
				Queue: 0.05, TTFT: 0.07, Prefill: 0.01, Decode: 1, E2E: 1.07, MaxTokens: 50, PromptTokens: 10, CompletionTokens: 50},
		}})
	}
	f := func(s *Server, query string, code int, wantIDs string, total int) RequestsResponse {
		t.Helper()
		w := httptest.NewRecorder()
		s.requests(w, httptest.NewRequest(http.MethodGet, "/api/v1/requests?"+query, nil))
		if w.Code != code {
			t.Fatalf("%s: status %d (%s), want %d", query, w.Code, w.Body, code)
		}
		var resp RequestsResponse
		if code != http.StatusOK {
			return resp
		}
		if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
			t.Fatal(err)
		}
		ids := ""
		for _, r := range resp.Requests {
			ids += r.ID
		}
		if ids != wantIDs || resp.Total != total {
			t.Errorf("%s: %q of %d, want %q of %d", query, ids, resp.Total, wantIDs, total)
		}
		return resp
	}
	s := &Server{Requests: l}
	resp := f(s, "phase=queue&min=0.15", 200, "edc", 3)
	if h := resp.Histograms[journey.PhaseQueue]; h.Count != 3 || resp.Requests[0].Phases[journey.PhaseQueue] < 0.39 {
		t.Errorf("histogram %+v, first %+v", h, resp.Requests[0])
	}
	f(s, "sort=newest&limit=2&offset=1", 200, "dc", 5)
	f(s, "instance=d0&phase=queue", 200, "edcba", 5)
	f(s, "pool=mistral", 200, "", 0)
	f(s, "at="+itoa(t0.Add(1500*time.Millisecond).UnixMilli()), 200, "b", 1) // a ended at 1.33 s
	for _, bad := range []string{"sort=fastest", "phase=think", "min=1", "phase=queue&min=-1", "limit=0", "limit=100000", "offset=-1", "at=x"} {
		f(s, bad, 400, "", 0)
	}
	none := f(&Server{}, "", 200, "", 0)
	if none.Reason == "" {
		t.Error("no receiver and no reason")
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
