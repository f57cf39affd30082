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
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/scrape"
	"github.com/ptdmon/ptdmon/internal/sim"
)

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

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
	m, err := sim.NewModel(sc, 7, epoch)
	if err != nil {
		t.Fatal(err)
	}
	kv := kvsize.Request{Bytes: sc.KVBytesPerRequest, Basis: kvsize.BasisSimulator}
	rec, err := Create(Options{Dir: dir, Meta: Meta{Version: "test", Interval: Duration(time.Second), Window: Duration(5 * time.Second), KVRequest: kv, PoolRequests: pools}})
	if err != nil {
		t.Fatal(err)
	}
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second, History: secs + 1, KVRequest: kv, PoolRequests: pools, Tap: rec})
	// As serve does: a new run resumes nothing, and checkpoints from here.
	if _, err := rec.Resume(l); err != nil {
		t.Fatal(err)
	}
	insts := m.Instances()
	infos := make([]engine.Target, len(insts))
	readers := make([]*engine.Reader, len(insts))
	for i, in := range insts {
		role, _ := engine.ParseRole(in.Role)
		eng, _ := engine.ParseEngine(in.Engine)
		infos[i] = engine.Target{Name: in.Name, Role: role, Engine: eng}
		readers[i] = engine.NewReader(eng, role, engine.KVAuto)
	}
	l.SetTargets(infos)
	var pts []ledger.Point
	var late []ledger.Scrape
	var buf []byte
	for s := 1; s <= secs; s++ {
		at := time.Duration(s) * time.Second
		m.AdvanceTo(at)
		for i, in := range insts {
			// Each target's midpoint is off the grid by a different number
			// of nanoseconds; the second one's scrapes are slow and arrive
			// after the tick.
			when := epoch.Add(at - time.Duration(137_000+i*1_311+s*17))
			if (s+i)%23 == 0 || downFrom > 0 && s >= downFrom && i == downTarget {
				l.Record(ledger.Scrape{Target: in.Name, Time: when, Err: errors.New("timeout"), Reason: scrape.ReasonTimeout})
				continue
			}
			body, f, err := m.Exposition(in.Name, buf[:0])
			if err != nil {
				t.Fatal(err)
			}
			buf = body
			obs, err := readers[i].Read(body, f.ContentType())
			if err != nil {
				t.Fatal(err)
			}
			sc := ledger.Scrape{Target: in.Name, Time: when, Duration: 3 * time.Millisecond, Bytes: len(body), Samples: obs.Samples, Obs: obs}
			if i == 1 {
				o := *obs
				o.Counters = append([]engine.CounterValue(nil), obs.Counters...)
				sc.Obs = &o
				late = append(late, sc)
				continue
			}
			l.Record(sc)
		}
		pts = append(pts, l.Tick(epoch.Add(at+time.Duration(s)*911)))
		if afterTick != nil {
			afterTick(l)
		}
		for _, sc := range late {
			l.Record(sc)
		}
		late = late[:0]
	}
	if err := end(rec); err != nil {
		t.Fatal(err)
	}
	return pts
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
