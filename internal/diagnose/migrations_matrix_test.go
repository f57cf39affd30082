package diagnose_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// The matrix's migration cell: behind Dynamo's frontend, a decode instance
// and later a prefill instance go down; the frontend sends the requests
// they held again to the workers left. The pool's migrated requests, its
// rate added up over the run, are the simulator's count; while they fall
// in the verdict's window, its notes say that load was sent again to
// another worker.
//
// The frontend's counter has no series until its first migration (at the
// first restart): between two direct reads of the frontend it was made in
// between, so its first value is what it counted since the read before,
// and is counted (docs/design.md#counter-resets); Prometheus' rate() loses
// it.
func TestMigrationsMatchSimulatorTruth(t *testing.T) {
	fl := flavours[1] // vllm-nixl
	g := group(fl, fl.engine, sim.StageNone, 1, false)
	g.Router = string(engine.DynamoFrontend)
	sc := scenario("migrations", g)
	sc.Restarts = []sim.Restart{{Instance: g.Name + "-d1", At: 8 * time.Second, Down: 3 * time.Second},
		{Instance: g.Name + "-d0", At: 40 * time.Second, Down: 3 * time.Second},
		{Instance: g.Name + "-p1", At: 80 * time.Second, Down: 3 * time.Second}}
	checks, noted := 0, 0
	const duration = 120 * time.Second
	pts, model, pool := judgedPoolRun(t, sc, 17, duration, 20*time.Second, 5*time.Second, func(at time.Duration, gv diagnose.GroupVerdict) string {
		// Checkpoints whose window holds a restart: the migrations are a
		// large share of the offered load there.
		near := false
		for _, rs := range sc.Restarts[1:] {
			near = near || at > rs.At+2*time.Second && at <= rs.At+15*time.Second
		}
		if !near {
			return ""
		}
		checks++
		if !strings.Contains(strings.Join(gv.Notes, " | "), "were sent again after their worker was lost") {
			return fmt.Sprintf("at %v: notes %q do not name the migrations", at, gv.Notes)
		}
		noted++
		return ""
	})
	if checks == 0 {
		t.Fatal("no checkpoint near a restart")
	}
	truth := model.MigrationTruth(g.Name, duration)
	want := float64(truth.Total())
	if first := model.MigrationTruth(g.Name, 15*time.Second); first.Total() == 0 || want < 10 {
		t.Fatalf("migrations: %+v at the first restart, %+v in all: too few to compare", first, truth)
	}
	// Each tick's rate is the window's increase over its length: added up
	// over the ticks, each migration counts once.
	var got, maxRatio float64
	for _, p := range pts {
		pp, ok := p.Pool(pool)
		if !ok {
			t.Fatalf("at %v: no pool %q", p.Time, pool)
		}
		m := pp.Failures.Migrated
		if !m.PerSecond.OK() {
			continue
		}
		got += m.PerSecond.V
		// A share of the requests sent to workers, served + migrated:
		// never above 1, though served drops while an instance is down.
		if m.Ratio.OK() {
			if m.Ratio.V < 0 || m.Ratio.V > 1 || m.PerSecond.V > 0 && m.Ratio.V == 0 {
				t.Errorf("at %v: migrated share %v at %v/s", p.Time, m.Ratio.V, m.PerSecond.V)
			}
			maxRatio = math.Max(maxRatio, m.Ratio.V)
		}
	}
	t.Logf("truth: %.0f migrations (%+v); ledger %.1f, highest share %.2f; notes in %d of %d checkpoints near a restart",
		want, truth, got, maxRatio, noted, checks)
	if math.Abs(got-want) > math.Max(0.1*want, 2) {
		t.Errorf("ledger's migrations %.1f, truth %.0f", got, want)
	}
	if maxRatio < 0.05 {
		t.Errorf("highest migrated share %.3f: the restarts' migrations are a large share of their windows", maxRatio)
	}
}
