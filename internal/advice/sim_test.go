package advice

import (
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// run drives the simulator through dur of simulated time, scraping every
// instance once a simulated second through the real adapters into a
// ledger, and returns the ledger's points and the model.
func run(t testing.TB, sc sim.Scenario, seed int64, dur time.Duration) ([]ledger.Point, *sim.Model) {
	t.Helper()
	epoch := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	m, err := sim.NewModel(sc, seed, epoch)
	if err != nil {
		t.Fatal(err)
	}
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second,
		History: int(dur/time.Second) + 1, BytesPerRequest: float64(sc.KVBytesPerRequest)})
	insts := m.Instances()
	infos := make([]ledger.TargetInfo, len(insts))
	readers := make([]*engine.Reader, len(insts))
	for i, in := range insts {
		role, _ := engine.ParseRole(in.Role)
		eng, _ := engine.ParseEngine(in.Engine)
		infos[i] = ledger.TargetInfo{Name: in.Name, Role: role, Engine: eng}
		readers[i] = engine.NewReader(eng, role, engine.KVAuto)
	}
	l.SetTargets(infos)
	var buf []byte
	points := make([]ledger.Point, 0, int(dur/time.Second))
	for at := time.Second; at <= dur; at += time.Second {
		m.AdvanceTo(at)
		now := epoch.Add(at)
		for i, in := range insts {
			body, f, err := m.Exposition(in.Name, buf[:0])
			if err != nil {
				l.Record(ledger.Scrape{Target: in.Name, Time: now, Err: err, Reason: "refused"})
				continue
			}
			buf = body
			obs, err := readers[i].Read(body, f.ContentType())
			if err != nil {
				t.Fatalf("%s at %v: %v", in.Name, at, err)
			}
			l.Record(ledger.Scrape{Target: in.Name, Time: now, Obs: obs})
		}
		points = append(points, l.Tick(now))
	}
	return points, m
}
