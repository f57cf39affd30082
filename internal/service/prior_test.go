package service

import (
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/record"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
)

// capacities_from reads an earlier run's capacities, and refuses a run
// read at another interval or window, or a directory that holds none.
func TestPriorOf(t *testing.T) {
	sc, err := sim.LoadScenario("prefill-bound")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rec, err := record.Create(record.Options{Dir: dir, Meta: record.Meta{Version: "test", Interval: record.Duration(time.Second), Window: record.Duration(5 * time.Second),
		KVRequest: kvsize.Request{Bytes: sc.KVBytesPerRequest, Basis: kvsize.BasisSimulator}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := simtest.RunWith(sc, 1, 60*time.Second, simtest.Options{Tap: rec, Start: func(l *ledger.Ledger) error { _, err := rec.Resume(l); return err }}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := func(dir string, window time.Duration) *config.Config {
		return &config.Config{CapacitiesFrom: dir, Interval: config.Duration{Duration: time.Second}, Window: config.Duration{Duration: window}}
	}
	p, err := PriorOf(cfg(dir, 5*time.Second))
	if err != nil || p == nil || p.Capacities[0].Basis != advice.BasisSaturated || !strings.Contains(p.From, dir) {
		t.Fatalf("prior %+v, %v: want prefill learned saturated, from %s", p, err, dir)
	}
	if _, err := PriorOf(cfg(dir, 10*time.Second)); err == nil || !strings.Contains(err.Error(), "window 5s; this run at 1s, 10s") {
		t.Errorf("a run of another window: %v", err)
	}
	if _, err := PriorOf(cfg(t.TempDir(), 5*time.Second)); err == nil || !strings.HasPrefix(err.Error(), "capacities_from: ") {
		t.Errorf("a directory without a run: %v", err)
	}
	if p, err := PriorOf(cfg("", 5*time.Second)); p != nil || err != nil {
		t.Errorf("no capacities_from: %v, %v", p, err)
	}
}
