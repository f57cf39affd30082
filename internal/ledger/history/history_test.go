package history

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger/point"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// points returns n points, one a second, of a deployment in one pool as a
// ledger computes them: instances with and without values, one whose
// window times are in another zone, one that goes down and then stale
// with a reason that changes every second, one seen every other second.
func points(n int) []point.Point {
	east := time.FixedZone("UTC+5", 5*3600)
	out := make([]point.Point, n)
	for s := range out {
		now := t0.Add(time.Duration(s) * time.Second)
		val := func(v float64) point.Num { return point.Val(v) }
		none := point.Absent("no such gauge in the exposition")
		ip := func(target, role string, up bool, v float64, why string, zone *time.Location) point.InstancePoint {
			n := val(v)
			if why != "" {
				n = point.Absent(why)
			}
			p := point.InstancePoint{Target: target, Role: role, Engine: "vllm", Pool: "m", Up: up,
				Instant: n, Window: n, KVBytes: val(v * 1024), KVBytesW: n, Running: val(float64(s % 4)), Waiting: none,
				Queues:  point.Queues{Bootstrap: none, Inflight: none, Prealloc: none, Transfer: none},
				KVUsage: val(0.1 * float64(s%10)), PromptTPS: n, GenTPS: none,
				// What the older detail reads back: it does not keep it.
				WaitingDeferred: point.Absent(point.WhyNotKeptDetail)}
			if why == "" {
				p.WindowFrom, p.WindowTo = now.Add(-5*time.Second).In(zone), now.Add(-time.Millisecond).In(zone)
			}
			return p
		}
		p := point.Point{Time: now, GlobalKVBytes: val(float64(s << 20))}
		p.Instances = append(p.Instances,
			ip("p0", "prefill", true, 3*float64(s), "", time.UTC),
			ip("p1", "prefill", true, float64(s)/3, "", time.UTC),
			ip("d0", "decode", true, 2*float64(s), "", east))
		// d0, whose times are in the second zone, sleeps now and then at
		// either level: its sleep state shares the zone's flags.
		p.Instances[2].Sleep = [...]string{"", "", point.SleepWeightsOffloaded, point.SleepWeightsOffloaded, point.SleepDiscardAll, point.SleepPaused, ""}[s%7]
		switch {
		case s < 30:
			p.Instances = append(p.Instances, ip("d1", "decode", true, float64(s), "", time.UTC))
		case s < 60:
			p.Instances = append(p.Instances, ip("d1", "decode", false, 0, fmt.Sprintf("down: connection refused %d", s%3), time.UTC))
		default:
			p.Instances = append(p.Instances, ip("d1", "decode", false, 0, fmt.Sprintf("stale: no scrape for %d s", s-60), time.UTC))
		}
		if s%2 == 0 {
			p.Instances = append(p.Instances, ip("x0", "decode", true, float64(s), "", time.UTC))
		}
		p.Prefill = point.StagePoint{Instant: val(4 * float64(s)), Window: none, Instances: 2, Up: 2}
		p.Decode = point.StagePoint{Instant: val(float64(s)), Window: none, Instances: 3, Up: 2, Missing: []string{"d1"}}
		p.KV = point.KVPoint{Instant: val(7), Window: none, Instances: 3, Up: 3}
		p.Router = point.NoRouter("")
		p.Pools = []point.PoolPoint{{Name: "m", Model: "m", Instances: len(p.Instances), Prefill: p.Prefill, KV: p.KV, Decode: p.Decode,
			Router: point.NoRouter("m"), Failures: point.AbsentFailures("no KV counter"), Phases: point.AbsentPhases("no phase histogram")}}
		out[s] = p
	}
	return out
}

// read returns every point h holds with the detail d asks for.
func read(h *History, d Detail) []point.Point {
	w, _ := h.Collect(time.Time{}, -1)
	return w.Complete(d)
}

// TestHistoryReadsWhatWasAppended checks that the points read back, whether
// their detail is still hot, in a block or in a segment, equal the points
// appended, and that the tables hold what the stored detail refers to.
func TestHistoryReadsWhatWasAppended(t *testing.T) {
	const ticks, ring = 120, 40
	// Most points go cold; most cold points are in segments, the newest
	// few in blocks; the oldest segment has lost some points.
	h := New(ring, 1<<20, 3, 7)
	all := points(ticks)
	for _, p := range all {
		h.Append(p)
	}
	want := all[ticks-ring:]
	got := read(&h, Detail{})
	if len(got) != ring {
		t.Fatalf("history holds %d points, want %d", len(got), ring)
	}
	cold, folded := 0, 0
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("point %d read back differs:\n got %+v\nwant %+v", i, got[i], want[i])
		}
		if h.at(i).stored() {
			cold++
		}
		if h.at(i).folded != nil {
			folded++
		}
	}
	if cold != ring-3 {
		t.Errorf("%d points stored by column, want %d", cold, ring-3)
	}
	// One pool holds every instance: its stages are the deployment's, and
	// cold points keep them once.
	if folded != ring-3 {
		t.Errorf("%d points with their one pool folded, want %d", folded, ring-3)
	}
	if d0 := got[0].Instances[2]; d0.Target != "d0" || d0.WindowTo.Location() != want[0].Instances[2].WindowTo.Location() {
		t.Errorf("%s's window time reads back in %v", d0.Target, d0.WindowTo.Location())
	}
	w, more := h.Collect(want[9].Time, 5)
	if page := w.Complete(Detail{}); !more || !reflect.DeepEqual(page, want[10:15]) {
		t.Errorf("Collect after point 9 = %d points (more %v), want points 10..14", len(page), more)
	}
	if p, ok := h.Latest(); !ok || !reflect.DeepEqual(p, want[ring-1]) {
		t.Errorf("Latest differs from the newest point")
	}
	for _, d := range []Detail{{None: true}, {Target: "d1"}, {Target: "x0"}, {Target: "gone"}} {
		got := read(&h, d)
		for i := range got {
			w := want[i]
			w.Instances = nil
			for _, ip := range want[i].Instances {
				if !d.None && ip.Target == d.Target {
					w.Instances = append(w.Instances, ip)
				}
			}
			if !reflect.DeepEqual(got[i], w) {
				t.Fatalf("Detail %+v point %d = %+v, want %+v", d, i, got[i].Instances, w.Instances)
			}
		}
	}

	// The tables hold what the stored blocks and segments refer to and
	// nothing more: the stale reason of every past second has left with
	// its block, or with the last point of its segment.
	reasons, names := map[string]bool{}, map[instanceKey]bool{}
	seen := map[*segment]bool{}
	for i := 0; i < h.count; i++ {
		s := h.at(i)
		var stored []point.InstancePoint
		switch {
		case s.seg != nil && !seen[s.seg]:
			seen[s.seg] = true
			rd := h.cols.newSegReader(s.seg, "")
			for k := range s.seg.n { // the points the ring has let go of too
				stored = append(stored, rd.point(&h.cols, k, "")...)
			}
		case s.cold != nil:
			stored = h.cols.materialise(s.cold, "")
		}
		for _, ip := range stored {
			names[instanceKey{ip.Target, ip.Role, ip.Engine, ip.Pool}] = true
			for _, f := range instanceSeries {
				if n := f(&ip); !n.OK() {
					reasons[n.Why] = true
				}
			}
		}
	}
	if len(seen) < 2 {
		t.Errorf("%d segments hold the cold points, want several", len(seen))
	}
	if n := len(h.cols.reasons.codes); n != len(reasons) {
		t.Errorf("reason table holds %d strings, the stored blocks and segments use %d", n, len(reasons))
	}
	if n := len(h.cols.instances.codes); n != len(names) {
		t.Errorf("instance table holds %d entries, the stored blocks and segments use %d", n, len(names))
	}
}

// TestHistoryBudgetDropsOldestDetail checks that detail over the budget
// leaves oldest first, cold blocks and segments included, and that the
// tables forget what only the dropped detail used.
func TestHistoryBudgetDropsOldestDetail(t *testing.T) {
	h := New(30, 20, 2, 3)
	for _, p := range points(50) {
		p.Instances = p.Instances[:2]
		h.Append(p)
	}
	pts := read(&h, Detail{})
	for i, p := range pts {
		want := 0
		if i >= len(pts)-10 {
			want = 2
		}
		if len(p.Instances) != want {
			t.Errorf("point %d of %d has %d instances, want %d", i, len(pts), len(p.Instances), want)
		}
	}
	if h.kept != 20 {
		t.Errorf("kept = %d, want 20", h.kept)
	}
	if n := len(h.cols.instances.codes); n != 2 {
		t.Errorf("instance table holds %d entries, want 2", n)
	}
}

// TestCheckpointRoundTrip checks that the pieces Ready hands out restore
// into another history as the points appended, and that a piece is
// handed out once.
func TestCheckpointRoundTrip(t *testing.T) {
	const ticks = 60
	all := points(ticks)
	h := New(ticks, 1<<20, 3, 7)
	h.KeepCheckpoints()
	var pieces [][]byte
	for _, p := range all {
		h.Append(p)
		b, err := h.Ready().Encode(42)
		if err != nil {
			t.Fatal(err)
		}
		pieces = append(pieces, b...)
	}
	if b, _ := h.Ready().Encode(42); b != nil {
		t.Errorf("Ready hands out %d pieces again", len(b))
	}
	var mu sync.Mutex
	r := New(ticks, 1<<20, 3, 7)
	if n, _, err := r.Restore(&mu, pieces, time.Time{}, func(byte) uint64 { return 43 }); !errors.Is(err, ErrCheckpointMismatch) || n != 0 {
		t.Errorf("restore under another key: %d points, %v", n, err)
	}
	n, last, err := r.Restore(&mu, pieces, time.Time{}, func(byte) uint64 { return 42 })
	if err != nil {
		t.Fatal(err)
	}
	// Every point but the hot ones and the blocks waiting for their segment.
	if n < ticks-3-7 || n > ticks-3 || !last.Equal(all[n-1].Time) {
		t.Fatalf("restored %d points up to %v", n, last)
	}
	got := read(&r, Detail{})
	for i := range got {
		if !reflect.DeepEqual(got[i], all[i]) {
			t.Fatalf("restored point %d differs:\n got %+v\nwant %+v", i, got[i], all[i])
		}
	}
}
