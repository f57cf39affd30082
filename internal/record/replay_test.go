package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/scrape"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
)

var epoch = simtest.Epoch

// liveRun drives the simulator's engines through the adapters into a
// ledger that records to dir, as serve does, with what makes the order of
// inputs matter: scrape times off the millisecond grid, scrapes that reach
// the ledger after a tick later than their own time, and failed scrapes.
// It returns the live points.
func liveRun(t *testing.T, dir, scenario string, secs int) []ledger.Point {
	t.Helper()
	return liveRunWith(t, dir, scenario, secs, (*Recorder).Close)
}

// liveRunOpen is liveRun ended as a crash ends it: the head is not cut
// into a block and the process has no stop; what was recorded is in the
// WAL only.
func liveRunOpen(t *testing.T, dir, scenario string, secs int) []ledger.Point {
	t.Helper()
	return liveRunWith(t, dir, scenario, secs, (*Recorder).abandon)
}

func liveRunWith(t testing.TB, dir, scenario string, secs int, end func(*Recorder) error) []ledger.Point {
	t.Helper()
	sc, err := sim.LoadScenario(scenario)
	if err != nil {
		t.Fatal(err)
	}
	return liveRunOf(t, dir, sc, secs, nil, end, nil)
}

// downFrom, when above 0, is the second from which liveRunOf's instance
// downTarget fails every scrape: an engine gone for good.
var downFrom, downTarget = 0, 2

// liveRunOf is liveRunWith on the scenario sc, with the pools' own
// B_request pools (nil: none); afterTick, if set, is called after each
// tick with the live ledger.
func liveRunOf(t testing.TB, dir string, sc sim.Scenario, secs int, pools map[string]kvsize.Request, end func(*Recorder) error, afterTick func(*ledger.Ledger)) []ledger.Point {
	t.Helper()
	kv := kvsize.Request{Bytes: sc.KVBytesPerRequest, Basis: kvsize.BasisSimulator}
	rec, err := Create(Options{Dir: dir, Meta: Meta{DirectReads: true, Version: "test", Interval: Duration(time.Second), Window: Duration(5 * time.Second), KVRequest: kv, PoolRequests: pools}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := simtest.RunWith(sc, 7, time.Duration(secs)*time.Second, simtest.Options{
		PoolRequests: pools, Tap: rec, OnTick: afterTick,
		// As serve does: a new run resumes nothing, and checkpoints from here.
		Start: func(l *ledger.Ledger) error { _, err := rec.Resume(l); return err },
		Read: func(s, i int, sc *ledger.Scrape) simtest.When {
			// Each target's midpoint is off the grid by a different number
			// of nanoseconds; the second one's scrapes are slow and arrive
			// after the tick.
			sc.Time = sc.Time.Add(-time.Duration(137_000 + i*1_311 + s*17))
			if (s+i)%23 == 0 || downFrom > 0 && s >= downFrom && i == downTarget {
				sc.Obs, sc.Err, sc.Reason, sc.Duration, sc.Bytes, sc.Samples = nil, errors.New("timeout"), scrape.ReasonTimeout, 0, 0, 0
				return simtest.BeforeTick
			}
			if i == 1 {
				return simtest.AfterTick
			}
			return simtest.BeforeTick
		},
		TickAt: func(s int, at time.Time) time.Time { return at.Add(time.Duration(s) * 911) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := end(rec); err != nil {
		t.Fatal(err)
	}
	return res.Points
}

func TestReplayEqualsLive(t *testing.T) {
	dir := t.TempDir()
	live := liveRun(t, dir, "kv-bound", 90)
	run, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	replayed, err := run.Points(time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(replayed) != len(live) {
		t.Fatalf("replay has %d points, live had %d", len(replayed), len(live))
	}
	for i := range live {
		if d := diffPoints(live[i], replayed[i]); d != "" {
			t.Fatalf("point %d (%v): %s", i, live[i].Time, d)
		}
	}
	// The verdict is a function of the points: its timeline is the same.
	for i := 10; i <= len(live); i += 10 {
		v1 := diagnose.Diagnose(live[:i], diagnose.Config{})
		v2 := diagnose.Diagnose(replayed[:i], diagnose.Config{})
		if !reflect.DeepEqual(mustJSON(t, v1), mustJSON(t, v2)) {
			t.Fatalf("verdict at %d: live %s, replay %s", i, mustJSON(t, v1), mustJSON(t, v2))
		}
	}
	if got := run.Meta().KVRequest.Bytes; got == 0 {
		t.Errorf("B_request not recorded")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// diffPoints compares two points through their JSON, numbers within a
// relative 1e-12: the replay may add one instance's DP-rank series in
// another order than the adapter did.
func diffPoints(a, b ledger.Point) string {
	var x, y any
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	_ = json.Unmarshal(ja, &x)
	_ = json.Unmarshal(jb, &y)
	if d := diffJSON("", x, y); d != "" {
		return d
	}
	return ""
}

func diffJSON(path string, a, b any) string {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return path + ": " + js(a) + " vs " + js(b)
		}
		for k := range av {
			if d := diffJSON(path+"."+k, av[k], bv[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return path + ": " + js(a) + " vs " + js(b)
		}
		for i := range av {
			if d := diffJSON(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i]); d != "" {
				return d
			}
		}
		return ""
	case float64:
		bv, ok := b.(float64)
		if !ok || math.Abs(av-bv) > 1e-12*math.Max(math.Abs(av), math.Abs(bv)) {
			return path + ": " + js(a) + " vs " + js(b)
		}
		return ""
	}
	if !reflect.DeepEqual(a, b) {
		return path + ": " + js(a) + " vs " + js(b)
	}
	return ""
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

// A run killed after its first two minutes (its head's chunks already on
// disk, nothing in a block) replays as it ran: the read-only TSDB is
// queried through one querier, which loads the head from the WAL once.
func TestKilledRunReplays(t *testing.T) {
	dir := t.TempDir()
	live := liveRunOpen(t, dir, "balanced", 150)
	run, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if n, err := run.Ticks(time.Time{}); err != nil || n != len(live) {
		t.Fatalf("the killed run has %d ticks (%v), want %d", n, err, len(live))
	}
	replayed, err := run.Points(time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(replayed) != len(live) {
		t.Fatalf("replay has %d points, live had %d", len(replayed), len(live))
	}
	for i := range live {
		if d := diffPoints(live[i], replayed[i]); d != "" {
			t.Fatalf("point %d (%v): %s", i, live[i].Time, d)
		}
	}
}
