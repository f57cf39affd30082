package record

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/testutil"
)

// smallDisk mounts a tmpfs of size bytes (root only) and returns its path.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("a small tmpfs needs root and mount: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// On a full disk the ledger goes on computing points, the recorder says
// it fails, and nothing panics; what fitted is readable.
func TestFullDiskKeepsTheLiveView(t *testing.T) {
	dir := filepath.Join(smallDisk(t, "256k"), "run")
	rec, err := Create(Options{Dir: dir, Meta: Meta{DirectReads: true, Interval: Duration(time.Second), Window: Duration(5 * time.Second)}})
	if err != nil {
		t.Fatal(err)
	}
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second, History: 10_000, Tap: rec})
	const targets = 50
	infos := make([]engine.Target, targets)
	for i := range infos {
		infos[i] = engine.Target{Name: "p" + string(rune('a'+i/26)) + string(rune('a'+i%26)), Role: engine.Prefill, Engine: "vllm"}
	}
	l.SetTargets(infos)
	failed := false
	var pts int
	for s := 1; s <= 600 && !failed; s++ {
		now := epoch.Add(time.Duration(s) * time.Second)
		for i, in := range infos {
			o := &engine.Observation{Engine: "vllm", Role: engine.Prefill}
			for k := 0; k < 40; k++ {
				o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.Completed, Series: uint64(k), Value: float64(s * (k + i + 1))})
			}
			l.Record(ledger.Scrape{Target: in.Name, Time: now.Add(-time.Millisecond), Obs: o})
		}
		p := l.Tick(now)
		pts++
		if s > 2 && !p.Prefill.Instant.OK() {
			t.Fatalf("tick %d: prefill rate absent (%s) while the disk fills", s, p.Prefill.Instant.Why)
		}
		if s%20 == 0 {
			// The writer catches up: its status then tells of what it wrote.
			testutil.Eventually(t, 10*time.Second, time.Millisecond, func() (bool, string) {
				return len(rec.ch) == 0, fmt.Sprintf("%d inputs still queued", len(rec.ch))
			})
			msg, _ := rec.Status()
			failed = msg != ""
		}
	}
	if !failed {
		t.Fatal("the recorder never reported the full disk")
	}
	msg, _ := rec.Status()
	if !strings.Contains(msg, "no space") {
		t.Errorf("status %q does not say the disk is full", msg)
	}
	if got := len(l.Since(time.Time{})); got != pts {
		t.Errorf("ledger holds %d points, %d ticks were made", got, pts)
	}
	_ = rec.Close() // may fail on the full disk; must not hang or panic
	if _, err := os.Stat(filepath.Join(dir, MetaFile)); err != nil {
		t.Errorf("run.json: %v", err)
	}
}

// A scrape that reaches the ledger after the recording closed is not
// recorded, and does not panic the scrape path.
func TestInputsAfterCloseAreDropped(t *testing.T) {
	rec, err := Create(Options{Dir: t.TempDir(), Meta: Meta{DirectReads: true, Interval: Duration(time.Second), Window: Duration(5 * time.Second)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	rec.Targets([]engine.Target{{Name: "p0"}})
	rec.Scrape(ledger.Scrape{Target: "p0", Time: epoch, Obs: &engine.Observation{}})
	rec.Tick(epoch, ledger.Point{Time: epoch})
	if err := rec.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
