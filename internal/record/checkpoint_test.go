package record

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// ckptRunTicks is long enough for two of the ledger's segments (64 points
// each) to be sealed and checkpointed after the 71 s hot tail.
const ckptRunTicks = 240

// resumed resumes the recording in dir into a fresh ledger keeping
// history points, as serve does, and returns its points and how many the
// checkpoint gave.
func resumed(t *testing.T, dir string, window time.Duration, history int) ([]ledger.Point, int) {
	t.Helper()
	kv := live0KV(t, dir)
	rec, err := Create(Options{Dir: dir, Meta: Meta{DirectReads: true, Version: "test", Interval: Duration(time.Second), Window: Duration(window), KVRequest: kv}})
	if err != nil {
		t.Fatal(err)
	}
	l := ledger.New(ledger.Config{Interval: time.Second, Window: window, History: history, KVRequest: kv, Tap: rec})
	if _, err := rec.Resume(l); err != nil {
		t.Fatal(err)
	}
	if err := rec.abandon(); err != nil {
		t.Fatal(err)
	}
	return l.Since(time.Time{}), rec.restored
}

// recomputed is the history today's path gives, from a copy of the
// recording without its checkpoint: every point computed again from the
// recorded inputs.
func recomputed(t *testing.T, dir string, window time.Duration, history int) []ledger.Point {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", dir, cp).CombinedOutput(); err != nil {
		t.Fatalf("copy the recording: %v\n%s", err, out)
	}
	if err := os.RemoveAll(filepath.Join(cp, CheckpointDir)); err != nil {
		t.Fatal(err)
	}
	pts, restored := resumed(t, cp, window, history)
	if restored != 0 {
		t.Fatalf("a recording without a checkpoint restored %d points", restored)
	}
	return pts
}

// sameHistory fails unless got and want hold the same points: values,
// absent reasons, per-instance detail and pools; and the verdicts and
// learned capacities read from them.
func sameHistory(t *testing.T, got, want []ledger.Point, window time.Duration) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d points, want %d", len(got), len(want))
	}
	for i := range want {
		if d := diffPoints(want[i], got[i]); d != "" {
			t.Fatalf("point %d (%v): %s", i, want[i].Time, d)
		}
		if len(got[i].Instances) != len(want[i].Instances) {
			t.Fatalf("point %d: %d instances, want %d", i, len(got[i].Instances), len(want[i].Instances))
		}
		if g, w := mustJSON(t, got[i].Pools), mustJSON(t, want[i].Pools); g != w {
			t.Fatalf("point %d pools:\n got %s\nwant %s", i, g, w)
		}
	}
	// The verdict timeline, as the API judges it: each point's verdict
	// over the points before it.
	for i := 1; i <= len(want); i++ {
		lo := max(0, i-90)
		v1 := mustJSON(t, diagnose.Diagnose(want[lo:i], diagnose.Config{}))
		v2 := mustJSON(t, diagnose.Diagnose(got[lo:i], diagnose.Config{}))
		if v1 != v2 {
			t.Fatalf("verdict at point %d:\n got %s\nwant %s", i-1, v2, v1)
		}
	}
	c1, _ := json.Marshal(advice.Learn(want, advice.Options{Window: window}))
	c2, _ := json.Marshal(advice.Learn(got, advice.Options{Window: window}))
	if string(c1) != string(c2) {
		t.Fatalf("learned capacities:\n got %s\nwant %s", c2, c1)
	}
}

// A run killed and resumed comes back from its checkpoint with the history
// the recomputing path gives: every point, its per-instance detail, the
// verdict timeline and the learned capacities; and both are the live run's.
func TestResumeRestoresTheCheckpoint(t *testing.T) {
	dir := t.TempDir()
	live := liveRunOpen(t, dir, "kv-bound", ckptRunTicks)
	want := recomputed(t, dir, 5*time.Second, 3600)
	got, restored := resumed(t, dir, 5*time.Second, 3600)
	if restored != 128 {
		t.Errorf("the checkpoint gave %d points, want the two segments' 128", restored)
	}
	sameHistory(t, got, want, 5*time.Second)
	sameHistory(t, got, live, 5*time.Second)

	// A second resume restores the same, and what the first one
	// recomputed is the live run's still.
	again, restored := resumed(t, dir, 5*time.Second, 3600)
	if restored != 128 {
		t.Errorf("the second resume's checkpoint gave %d points, want 128", restored)
	}
	sameHistory(t, again, live, 5*time.Second)
}

// An engine that went down for good long before the kill, before the
// recorded inputs a resume recomputes: its last read still counts, as it
// did live (its KV bytes in the global counter, its place in the KV stage).
func TestResumeKnowsAnEngineDownSinceLongAgo(t *testing.T) {
	downFrom = 60
	defer func() { downFrom = 0 }()
	dir := t.TempDir()
	live := liveRunOpen(t, dir, "kv-bound", ckptRunTicks)
	got, restored := resumed(t, dir, 5*time.Second, 3600)
	if restored != 128 {
		t.Errorf("the checkpoint gave %d points, want 128", restored)
	}
	sameHistory(t, got, live, 5*time.Second)
	// A ledger keeping 100 points: the recomputing path, cut as well.
	short, _ := resumed(t, dir, 5*time.Second, 100)
	sameHistory(t, short, live[len(live)-100:], 5*time.Second)
}

// A checkpoint that cannot be used whole, or none, leaves the resume to
// recompute what it lacks: the history is the same either way.
func TestResumeFallsBackFromTheCheckpoint(t *testing.T) {
	f := func(name string, window time.Duration, wantRestored int, damage func(t *testing.T, dir string)) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			liveRunOpen(t, dir, "kv-bound", ckptRunTicks)
			damage(t, filepath.Join(dir, CheckpointDir))
			want := recomputed(t, dir, window, 3600)
			got, restored := resumed(t, dir, window, 3600)
			if restored != wantRestored {
				t.Errorf("the checkpoint gave %d points, want %d", restored, wantRestored)
			}
			sameHistory(t, got, want, window)
		})
	}
	file := func(t *testing.T, dir string) string {
		t.Helper()
		names, _ := filepath.Glob(filepath.Join(dir, "*.ckpt"))
		if len(names) != 1 {
			t.Fatalf("checkpoint files %v, want one", names)
		}
		return names[0]
	}
	f("absent", 5*time.Second, 0, func(t *testing.T, dir string) {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	})
	f("torn tail", 5*time.Second, 64, func(t *testing.T, dir string) {
		name := file(t, dir)
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(name, st.Size()-100); err != nil {
			t.Fatal(err)
		}
	})
	f("corrupted first record", 5*time.Second, 0, func(t *testing.T, dir string) {
		name := file(t, dir)
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		b[200] ^= 0x40
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	f("another window", 10*time.Second, 0, func(*testing.T, string) {})
}
