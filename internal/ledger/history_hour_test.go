//go:build !race

package ledger_test

import (
	"runtime"
	"testing"
	"time"
)

// The race detector has nothing to find in a heap measurement and makes
// this hour of history minutes long: scripts/test.sh runs it without.

// TestHistoryHourAt200 fills the default history (3,600 points at 1 s)
// from 200 vLLM instances and checks that every point keeps its
// per-instance detail and that what the ledger's live heap grows by from
// its first point to the full hour is at most 100 bytes per instance-point
// (the layout of one block per point took about 150).
func TestHistoryHourAt200(t *testing.T) {
	if testing.Short() {
		t.Skip("fills an hour of history: seconds of CPU")
	}
	const instances, points = 200, 3600
	var before, after runtime.MemStats
	f := newLiveFleet(t, instances)
	f.step() // the targets' state and the observations read are in place
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 1; i < points+100; i++ { // the ring has turned over: the oldest points have left
		f.step()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perPoint := float64(after.HeapAlloc-before.HeapAlloc) / (instances * points)
	t.Logf("%.0f heap bytes per instance-point (%d MiB for %d instance-points)", perPoint, (after.HeapAlloc-before.HeapAlloc)>>20, instances*points)
	if perPoint > 100 {
		t.Errorf("%.0f heap bytes per instance-point, want at most 100", perPoint)
	}

	pts := f.l.Since(time.Time{})
	if len(pts) != points {
		t.Fatalf("history holds %d points, want %d", len(pts), points)
	}
	for i, p := range pts {
		if len(p.Instances) != instances {
			t.Fatalf("point %d of %d has %d instances, want %d", i, points, len(p.Instances), instances)
		}
	}
	runtime.KeepAlive(f)
}
