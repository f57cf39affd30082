package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger/history"
	"github.com/ptdmon/ptdmon/internal/ledger/point"
)

// TestHistoryReadsWhatWasComputed checks that the points read back from the
// history, whether their detail is still hot or stored by column, equal the
// points the ticks returned: values, absent reasons, names, up, window times
// and their zones, and the JSON the API writes from them.
func TestHistoryReadsWhatWasComputed(t *testing.T) {
	const ticks, ring = 120, 40
	l := New(Config{Interval: time.Second, Window: 5 * time.Second, History: ring, KVRequest: kvsize.Request{Bytes: 1 << 20}})
	// Most points go cold within the test; most cold points are in
	// segments, the newest few in blocks; the oldest segment has lost some
	// points. (The history's own tests check where each point's detail is.)
	quickCold(l, 3, 7)
	l.SetTargets([]engine.Target{
		{Name: "p0", Role: engine.Prefill, Engine: engine.VLLM},
		{Name: "p1", Role: engine.Prefill},                     // no KV counter
		{Name: "d0", Role: engine.Decode, Engine: engine.VLLM}, // scraped in another zone
		{Name: "d1", Role: engine.Decode},                      // goes down, then stale
		{Name: "x0"},                                           // no role: the exposition's
	})
	east := time.FixedZone("UTC+5", 5*3600)
	var want []Point
	for s := 0; s < ticks; s++ {
		now := at(float64(s))
		g := map[engine.Metric]float64{engine.Running: float64(s % 4), engine.KVUsage: 0.1 * float64(s%10)}
		l.Record(Scrape{Target: "p0", Time: now.Add(-time.Millisecond), Obs: obs(engine.Prefill, float64(3*s), float64(s<<20), g)})
		l.Record(Scrape{Target: "p1", Time: now.Add(-2 * time.Millisecond), Obs: obs(engine.Prefill, float64(s), math.NaN(), nil)})
		l.Record(Scrape{Target: "d0", Time: now.Add(-3 * time.Millisecond).In(east), Obs: obs(engine.Decode, float64(2*s), float64(s<<19), g)})
		switch {
		case s < 30:
			l.Record(Scrape{Target: "d1", Time: now, Obs: obs(engine.Decode, float64(s), 0, nil)})
		case s < 60:
			l.Record(Scrape{Target: "d1", Time: now, Err: errors.New("connection refused " + fmt.Sprint(s%3))})
		} // then no scrape at all: stale, with a reason that changes every second
		if s%2 == 0 {
			l.Record(Scrape{Target: "x0", Time: now, Obs: obs(engine.Decode, float64(s), math.NaN(), nil)})
		}
		want = append(want, l.Tick(now))
	}
	want = want[ticks-ring:]

	got := l.Since(time.Time{})
	if len(got) != ring {
		t.Fatalf("history holds %d points, want %d", len(got), ring)
	}
	for i := range got {
		// The older detail (every point but the 3 hot ones) does not keep
		// the deferred waiting: it reads absent, for that reason.
		for k := range want[i].Instances {
			if i < ring-3 {
				want[i].Instances[k].WaitingDeferred = Absent(point.WhyNotKeptDetail)
			}
		}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("point %d read back differs:\n got %+v\nwant %+v", i, got[i].Instances, want[i].Instances)
		}
		gb, _ := json.Marshal(got[i])
		wb, _ := json.Marshal(want[i])
		if string(gb) != string(wb) {
			t.Fatalf("point %d JSON differs:\n got %s\nwant %s", i, gb, wb)
		}
	}
	if d0 := got[0].Instances[0]; d0.Target != "d0" || d0.WindowTo.Location() != east {
		t.Errorf("%s's window time reads back in %v, want d0's in %v", d0.Target, d0.WindowTo.Location(), east)
	}
	page, more := l.Range(want[9].Time, 5)
	if !more || len(page) != 5 || !reflect.DeepEqual(page, want[10:15]) {
		t.Errorf("Range after point 9 = %d points (more %v), want points 10..14", len(page), more)
	}
	if p, ok := l.Latest(); !ok || !reflect.DeepEqual(p, want[ring-1]) {
		t.Errorf("Latest differs from the newest tick")
	}

	for _, d := range []Detail{{None: true}, {Target: "d1"}, {Target: "x0"}, {Target: "gone"}} {
		got, _ := l.RangeDetail(time.Time{}, ring, d)
		for i := range got {
			w := want[i]
			w.Instances = nil
			for _, ip := range want[i].Instances {
				if !d.None && ip.Target == d.Target {
					w.Instances = append(w.Instances, ip)
				}
			}
			if !reflect.DeepEqual(got[i], w) {
				t.Fatalf("RangeDetail(%+v) point %d = %+v, want %+v", d, i, got[i].Instances, w.Instances)
			}
		}
	}
}

// TestHistoryBudgetDropsOldestDetail checks that detail over the budget
// leaves oldest first, cold blocks included.
func TestHistoryBudgetDropsOldestDetail(t *testing.T) {
	l := New(Config{Interval: time.Second, Window: 5 * time.Second, History: 30, InstanceBudget: 20})
	quickCold(l, 2, 3)
	l.SetTargets([]engine.Target{{Name: "a", Role: engine.Prefill}, {Name: "b", Role: engine.Decode}})
	for s := 0; s < 50; s++ {
		l.Tick(at(float64(s)))
	}
	pts := l.Since(time.Time{})
	for i, p := range pts {
		want := 0
		if i >= len(pts)-10 {
			want = 2
		}
		if len(p.Instances) != want {
			t.Errorf("point %d of %d has %d instances, want %d", i, len(pts), len(p.Instances), want)
		}
	}
}

// TestHistoryReadsWhileTicking reads cold points while ticks evict and
// compact others and reuse the tables' codes (run it with -race): every
// point read holds every instance under its own name.
func TestHistoryReadsWhileTicking(t *testing.T) {
	l := New(Config{Interval: time.Second, Window: 5 * time.Second, History: 20})
	quickCold(l, 1, 4)
	names := []string{"a", "b", "c"}
	var infos []engine.Target
	for _, n := range names {
		infos = append(infos, engine.Target{Name: n, Role: engine.Prefill})
	}
	l.SetTargets(infos)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for s := 0; s < 300; s++ {
			if s%50 == 0 { // targets leave and come back: names leave the table
				l.SetTargets(infos[:1+s%3])
				l.SetTargets(infos)
			}
			l.Record(Scrape{Target: names[s%3], Time: at(float64(s)), Err: fmt.Errorf("refused %d", s)})
			l.Tick(at(float64(s)))
		}
	}()
	for reading := true; reading; {
		select {
		case <-done:
			reading = false
		default:
		}
		for _, p := range l.Since(time.Time{}) {
			if len(p.Instances) != len(names) {
				t.Fatalf("point at %v has %d instances", p.Time, len(p.Instances))
			}
			for i, ip := range p.Instances {
				if ip.Target != names[i] {
					t.Fatalf("instance %d of the point at %v reads as %q", i, p.Time, ip.Target)
				}
			}
		}
	}
}

// quickCold makes l's points go cold once hot newer ones follow them, and
// gathers seal of its blocks into a segment, so that a short test reads
// blocks and segments: l must hold no point yet.
func quickCold(l *Ledger, hot, seal int) {
	l.hist = history.New(l.cfg.History, l.cfg.InstanceBudget, hot, seal)
}
