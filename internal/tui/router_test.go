package tui

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
)

// With a router in front of the pool, the advice line says the rate it
// sizes for was measured at the router; without one it says nothing.
func TestAdviceSaysRouterMeasured(t *testing.T) {
	for _, router := range []string{string(engine.LLMDEPP), ""} {
		sc, err := sim.LoadScenario("decode-bound")
		if err != nil {
			t.Fatal(err)
		}
		sc.Groups = sc.Groups[:1]
		sc.Groups[0].Router = router
		l, _, _, err := simtest.Run(sc, 1, 90*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer((&api.Server{Ledger: l}).Handler())
		defer srv.Close()
		c := &Client{Base: srv.URL, HTTP: srv.Client()}
		snap, err := c.Snapshot(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		a, err := c.Advice(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var frame strings.Builder
		RenderFrame(&frame, snap, nil, &AdviceResult{a, nil}, 100)
		if got := strings.Contains(frame.String(), "req/s +20% (router):"); got != (router != "") {
			t.Errorf("router %q: frame says router-measured %v:\n%s", router, got, frame.String())
		}
	}
}
