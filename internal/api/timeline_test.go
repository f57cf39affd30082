package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/kvsize"
)

// TestVerdictTimeline checks /api/v1/series' verdict spans against the
// verdict diagnosed afresh at every point from the ledger's history, and
// that the spans tile the points without gaps.
func TestVerdictTimeline(t *testing.T) {
	l, _ := cluster16(t, 60)
	s := &Server{Ledger: withKV(l, kvsize.Request{Bytes: bReq, Basis: "flag"})}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	for _, format := range []string{"full", "compact"} {
		resp, err := http.Get(srv.URL + "/api/v1/series?instances=0&format=" + format)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Points   []json.RawMessage `json:"points"`
			Verdicts []VerdictSpan     `json:"verdicts"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		pts := l.Since(time.Time{})
		if len(body.Verdicts) == 0 {
			t.Fatalf("%s: no verdict spans", format)
		}
		cfg := s.diagnoseConfig(l.Config())
		k := 0
		stages := map[diagnose.Class]bool{}
		for _, p := range pts {
			for k < len(body.Verdicts) && body.Verdicts[k].To.Before(p.Time) {
				k++
			}
			if k == len(body.Verdicts) || body.Verdicts[k].From.After(p.Time) {
				t.Fatalf("%s: no span covers the point at %s", format, p.Time)
			}
			var win = l.Since(p.Time.Add(-2*cfg.Window - l.Config().Interval))
			for len(win) > 0 && win[len(win)-1].Time.After(p.Time) {
				win = win[:len(win)-1]
			}
			want := diagnose.Diagnose(win, cfg).Class
			if got := body.Verdicts[k].Class; got != want {
				t.Errorf("%s: at %s the timeline says %s, diagnosing the window says %s", format, p.Time, got, want)
			}
			stages[want] = true
		}
		if !stages[diagnose.Insufficient] || len(stages) < 2 {
			t.Errorf("%s: the timeline should start with too little data and then reach a verdict: %v", format, stages)
		}
		for i := 1; i < len(body.Verdicts); i++ {
			if body.Verdicts[i].Class == body.Verdicts[i-1].Class && body.Verdicts[i].Class != diagnose.Mixed {
				t.Errorf("%s: spans %d and %d have the same stage %s; they should be one", format, i-1, i, body.Verdicts[i].Class)
			}
		}
	}
}
