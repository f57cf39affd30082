// Package advicetest drives the simulator in simulated time through the
// real engine adapters into a ledger, for tests of what reads the ledger.
package advicetest

import (
	"fmt"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// Epoch is the wall-clock time of simulated time 0.
var Epoch = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// Run simulates sc for dur, scraping every instance once a simulated
// second, and returns the ledger (W = 5 s, history covering the run), its
// points and the model. No wall clock is involved.
func Run(sc sim.Scenario, seed int64, dur time.Duration) (*ledger.Ledger, []ledger.Point, *sim.Model, error) {
	m, err := sim.NewModel(sc, seed, Epoch)
	if err != nil {
		return nil, nil, nil, err
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
		now := Epoch.Add(at)
		for i, in := range insts {
			body, f, err := m.Exposition(in.Name, buf[:0])
			if err != nil {
				l.Record(ledger.Scrape{Target: in.Name, Time: now, Err: err, Reason: "refused"})
				continue
			}
			buf = body
			obs, err := readers[i].Read(body, f.ContentType())
			if err != nil {
				return nil, nil, nil, fmt.Errorf("%s at %v: %w", in.Name, at, err)
			}
			l.Record(ledger.Scrape{Target: in.Name, Time: now, Obs: obs})
		}
		points = append(points, l.Tick(now))
	}
	return l, points, m, nil
}
