package ledger_test

import (
	"runtime"
	"testing"
	"time"
)

// TestHistoryHourAt200 fills the default history (3,600 points at 1 s)
// from 200 instances and checks that every point keeps its per-instance
// detail and that the ledger's live heap, history and per-target state
// together, is at most 200 bytes per instance-point.
func TestHistoryHourAt200(t *testing.T) {
	if testing.Short() {
		t.Skip("fills an hour of history: seconds of CPU")
	}
	const instances, points = 200, 3600
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f := newFleet(instances)
	f.fill(points + 100) // the ring has turned over: the oldest points have left
	runtime.GC()
	runtime.ReadMemStats(&after)
	perPoint := float64(after.HeapAlloc-before.HeapAlloc) / (instances * points)
	t.Logf("%.0f heap bytes per instance-point (%d MiB for %d instance-points)", perPoint, (after.HeapAlloc-before.HeapAlloc)>>20, instances*points)
	if perPoint > 200 {
		t.Errorf("%.0f heap bytes per instance-point, want at most 200", perPoint)
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
