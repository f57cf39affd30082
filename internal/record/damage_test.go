package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// round records secs ticks of one prefill target from start into dir, as
// one process of serve -record that stops cleanly (its head cut into a
// block), resuming what dir holds.
func round(t *testing.T, dir string, start time.Time, secs int) {
	t.Helper()
	rec := testRecording(t, dir)
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second, History: 1000, Tap: rec})
	if _, err := rec.Resume(l); err != nil {
		t.Fatal(err)
	}
	l.SetTargets([]engine.Target{{Name: "p0", Role: engine.Prefill, Engine: engine.VLLM}})
	for s := 1; s <= secs; s++ {
		at := start.Add(time.Duration(s) * time.Second)
		o := &engine.Observation{Engine: engine.VLLM, Role: engine.Prefill, Model: "m",
			Counters: []engine.CounterValue{{Metric: engine.Completed, Series: 1, Value: float64(7 * s)}}}
		l.Record(ledger.Scrape{Target: "p0", Time: at.Add(-300 * time.Millisecond), Obs: o})
		l.Tick(at)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
}

// blocks lists dir's block directories, oldest first.
func blocks(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && isULID(e.Name()) {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out) // ULIDs sort by their time
	return out
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// A damaged or mixed recording gives either one error naming the file, or
// the points that are readable with what was lost named — never a panic,
// never a wrong report in silence. The recording is two rounds (a stop and
// a resume: two blocks) of 20 ticks, an hour apart.
func TestDamagedRecordings(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	base := t.TempDir()
	good := filepath.Join(base, "good")
	round(t, good, t0, 20)
	round(t, good, t0.Add(time.Hour), 20)
	other := filepath.Join(base, "other")
	round(t, other, t0.Add(2*time.Hour), 20)
	if n := len(blocks(t, good)); n != 2 {
		t.Fatalf("two rounds left %d blocks, want 2", n)
	}
	// want: the error names these (empty: Open succeeds); lost: the one
	// loss names this file; points: the readable ticks.
	f := func(name string, damage func(t *testing.T, dir string) string, wantErr string, wantLost string, points int) {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			copyDir(t, good, dir)
			file := damage(t, dir)
			wantErr = strings.ReplaceAll(wantErr, "FILE", file)
			wantLost = strings.ReplaceAll(wantLost, "FILE", file)
			run, err := Open(dir)
			if wantErr != "" {
				if err == nil {
					run.Close()
					t.Fatalf("opened; want an error naming %q", wantErr)
				}
				if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), wantErr) {
					t.Fatalf("error %q: want one line naming %q", err, wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer run.Close()
			lost := run.Lost()
			switch {
			case wantLost == "" && len(lost) > 0:
				t.Errorf("lost %v; nothing was damaged", lost)
			case wantLost != "" && (len(lost) != 1 || lost[0].File != wantLost):
				t.Errorf("lost %v; want one loss, of %s", lost, wantLost)
			}
			n, err := run.Ticks(time.Time{})
			if err != nil || n != points {
				t.Errorf("%d ticks readable (%v), want %d", n, err, points)
			}
			if pts, err := run.Points(time.Time{}, time.Time{}); err != nil || len(pts) != points {
				t.Errorf("%d points (%v), want %d", len(pts), err, points)
			}
		})
	}
	first := func(t *testing.T, dir string) string { return blocks(t, dir)[0] }
	f("whole", func(t *testing.T, dir string) string { return "" }, "", "", 40)
	f("truncated chunk file", func(t *testing.T, dir string) string {
		p := filepath.Join(dir, first(t, dir), "chunks", "000001")
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, st.Size()*2/3); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(first(t, dir), "chunks", "000001")
	}, "", "FILE", 20)
	f("chunk file cut to its header", func(t *testing.T, dir string) string {
		p := filepath.Join(dir, first(t, dir), "chunks", "000001")
		if err := os.Truncate(p, 8); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(first(t, dir), "chunks", "000001")
	}, "", "FILE", 20)
	f("missing index", func(t *testing.T, dir string) string {
		b := first(t, dir)
		if err := os.Remove(filepath.Join(dir, b, "index")); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(b, "index")
	}, "", "FILE", 20)
	f("truncated block meta.json", func(t *testing.T, dir string) string {
		b := first(t, dir)
		if err := os.Truncate(filepath.Join(dir, b, "meta.json"), 20); err != nil {
			t.Fatal(err)
		}
		return b
	}, "", "FILE", 20)
	f("foreign block", func(t *testing.T, dir string) string {
		b := blocks(t, other)[0]
		copyDir(t, filepath.Join(other, b), filepath.Join(dir, b))
		return b
	}, "FILE (run ", "", 0)
	f("another run's run.json", func(t *testing.T, dir string) string {
		b, err := os.ReadFile(filepath.Join(other, MetaFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, MetaFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return first(t, dir)
	}, "FILE (run ", "", 0)
	f("run.json cut short", func(t *testing.T, dir string) string {
		if err := os.Truncate(filepath.Join(dir, MetaFile), 30); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, MetaFile)
	}, "FILE", "", 0)
	f("no run.json", func(t *testing.T, dir string) string {
		if err := os.Remove(filepath.Join(dir, MetaFile)); err != nil {
			t.Fatal(err)
		}
		return MetaFile
	}, "not a ptdmon recording (no FILE)", "", 0)
	f("empty WAL segment", func(t *testing.T, dir string) string {
		segs, _ := filepath.Glob(filepath.Join(dir, "wal", "0*"))
		next := fmt.Sprintf("%08d", len(segs))
		if len(segs) > 0 {
			last, _ := strconv.Atoi(filepath.Base(segs[len(segs)-1]))
			next = fmt.Sprintf("%08d", last+1)
		}
		if err := os.WriteFile(filepath.Join(dir, "wal", next), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return ""
	}, "", "", 40)
	f("WAL segment out of sequence", func(t *testing.T, dir string) string {
		if err := os.WriteFile(filepath.Join(dir, "wal", "00000099"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return ""
	}, "read WAL: finding WAL segments: segments are not sequential", "", 0)
}

// serve -record refuses a directory that holds another run's blocks, naming
// them, rather than adding a second run to them.
func TestRecordingRefusesAnotherRunsBlocks(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	round(t, a, t0, 10)
	round(t, b, t0.Add(time.Hour), 10)
	blk := blocks(t, b)[0]
	copyDir(t, filepath.Join(b, blk), filepath.Join(a, blk))
	_, err := Create(Options{Dir: a, Meta: Meta{DirectReads: true, Interval: Duration(time.Second), Window: Duration(5 * time.Second)}})
	var fe *ForeignError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), blk) {
		t.Fatalf("recording into a directory with another run's block %s: %v", blk, err)
	}
}

// A block cut short whose span the WAL still holds (the newest block of a
// stopped run) is read from the WAL, and the loss says so.
func TestBlockCutShortIsReadFromTheWAL(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	round(t, dir, time.Unix(1_800_000_000, 0), 20)
	if err := os.Truncate(filepath.Join(dir, blocks(t, dir)[0], "chunks", "000001"), 100); err != nil {
		t.Fatal(err)
	}
	run, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if l := run.Lost(); len(l) != 1 || !l[0].InWAL || !strings.Contains(l[0].String(), "read from the WAL") {
		t.Errorf("lost %v; want the block, read from the WAL", l)
	}
	if n, err := run.Ticks(time.Time{}); err != nil || n != 20 {
		t.Errorf("%d ticks (%v), want 20", n, err)
	}
}
