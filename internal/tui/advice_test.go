package tui

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
	"github.com/ptdmon/ptdmon/internal/slo"
)

// TestAdviceInFrame serves the decode-bound simulation, saturated long
// enough for decode's capacity to be learned, and draws a frame at 80
// columns: it shows the advised decode count and every SLO's attainment as
// the API gives them, and every line fits. Without thresholds the frame
// says how to set them; with the API unreachable, why there is no advice.
func TestAdviceInFrame(t *testing.T) {
	sc, err := sim.LoadScenario("decode-bound")
	if err != nil {
		t.Fatal(err)
	}
	l, _, _, err := simtest.Run(sc, 1, 150*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	f := func(name string, th slo.Thresholds, want func(api.AdviceBody) []string) {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer((&api.Server{Ledger: l, SLO: th}).Handler())
			defer srv.Close()
			c := &Client{Base: srv.URL, HTTP: srv.Client()}
			snap, err := c.Snapshot(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			a, aerr := c.Advice(t.Context())
			if aerr != nil {
				t.Fatal(aerr)
			}
			// The API's own answer, read apart from the client.
			resp, err := http.Get(srv.URL + "/api/v1/advice")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var body api.AdviceBody
			if err := json.Unmarshal(b, &body); err != nil {
				t.Fatal(err)
			}
			var frame strings.Builder
			RenderFrame(&frame, snap, nil, &AdviceResult{a, nil}, 80)
			out := frame.String()
			for l := range strings.Lines(out) {
				if n := len([]rune(strings.TrimSuffix(l, "\n"))); n > 80 {
					t.Errorf("line of %d columns > 80: %q", n, l)
				}
			}
			for _, w := range want(body) {
				if !strings.Contains(out, w) {
					t.Errorf("frame lacks %q:\n%s", w, out)
				}
			}
			t.Logf("\n%s", out)
		})
	}
	f("saturated", slo.Thresholds{TTFT: 20, ITL: 0.05, E2E: 15}, func(b api.AdviceBody) []string {
		d := b.Advice.Decode
		if !d.Instances.OK() {
			t.Fatalf("decode's capacity not learned: %+v", d)
		}
		short := make([]string, len(b.Advice.Short))
		for i, st := range b.Advice.Short {
			short[i] = string(st)
		}
		if !slices.Contains(short, "decode") {
			t.Fatalf("decode-bound, and the advice names %v short", short)
		}
		want := []string{fmt.Sprintf("decode %g (now %d)\n", d.Instances.V, d.Current), "goodput ", "short: " + strings.Join(short, ", ") + "\n"}
		// The whole request's attainment, not the decode leg's.
		for _, m := range b.SLO.Request.Metrics {
			v := "?"
			switch {
			case m.Within != nil:
				v = fmt.Sprintf("%.1f%%", m.Within.Fraction*100)
			case m.Bound != nil && m.Bound.Min < m.Bound.Max:
				v = fmt.Sprintf("%.0f–%.0f%%", m.Bound.Min*100, m.Bound.Max*100)
			case m.Bound != nil:
				v = fmt.Sprintf("%.1f%%", m.Bound.Min*100)
			}
			want = append(want, fmt.Sprintf("%s≤%gs %s", strings.ToUpper(m.Name), m.Threshold, v))
		}
		want = append(want, "whole request: ")
		return want
	})
	f("no thresholds", slo.Thresholds{}, func(b api.AdviceBody) []string {
		p := b.Advice.Prefill
		if !p.Instances.OK() || b.Advice.Capacities[0].Basis != "busy" {
			t.Fatalf("prefill's capacity below saturation not estimated from its busy time: %+v", b.Advice.Capacities[0])
		}
		lf := b.Advice.LimitsFirst
		if lf.Stage == "" {
			t.Fatalf("no stage limits first: %+v", lf)
		}
		return []string{"SLO      no SLO threshold set", fmt.Sprintf("prefill %g (now %d)", p.Instances.V, p.Current),
			fmt.Sprintf("next limit: %s at %.0f%% of capacity", lf.Stage, 100*lf.Utilisation.V)}
	})

	p, _ := l.Latest()
	var frame strings.Builder
	RenderFrame(&frame, &Snapshot{Point: &p}, nil, &AdviceResult{nil, fmt.Errorf("GET /api/v1/advice: 404 Not Found")}, 80)
	if !strings.Contains(frame.String(), "\nAdvice   unavailable: GET /api/v1/advice: 404 Not Found\n") {
		t.Errorf("frame without advice:\n%s", frame.String())
	}
}
