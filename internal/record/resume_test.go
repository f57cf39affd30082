package record

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// A recording resumed into a fresh ledger gives that ledger the run's
// points, as a replay does.
func TestResumeBringsTheHistoryBack(t *testing.T) {
	dir := t.TempDir()
	live := liveRun(t, dir, "kv-bound", 40)
	kv := live0KV(t, dir)
	rec := testRecording(t, dir)
	defer rec.Close()
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second, History: 100, KVRequest: kv, Tap: rec})
	n, err := rec.Resume(l)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(live) {
		t.Fatalf("resumed %d points, the run had %d", n, len(live))
	}
	got := l.Since(time.Time{})
	for i := range live {
		if d := diffPoints(live[i], got[i]); d != "" {
			t.Fatalf("point %d: %s", i, d)
		}
	}
	// Resuming records nothing twice.
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	run, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if k, err := run.Ticks(time.Time{}); err != nil || k != len(live) {
		t.Errorf("after the resume the recording has %d ticks (%v), want %d", k, err, len(live))
	}
	if s := run.Meta().Processes; len(s) != 2 || s[1].Stop.IsZero() {
		t.Errorf("processes = %+v, want two, the second stopped", s)
	}
}

// A resume into a ledger that keeps fewer points than the run has reads
// the span of those points and a warm-up before it, not the whole run,
// and its points are the live ones.
func TestResumeReadsWhatTheLedgerKeeps(t *testing.T) {
	dir := t.TempDir()
	live := liveRun(t, dir, "kv-bound", 150)
	kv := live0KV(t, dir)
	rec := testRecording(t, dir)
	defer rec.Close()
	const keep = 40
	cfg := ledger.Config{Interval: time.Second, Window: 5 * time.Second, History: keep, KVRequest: kv, Tap: rec}
	l := ledger.New(cfg)
	n, err := rec.Resume(l)
	if err != nil {
		t.Fatal(err)
	}
	// The warm-up, in ticks: W twice, the staleness and the series'
	// forgetting (8 scrapes), plus slack.
	if max := keep + 2*5 + 3 + 8 + 4 + 1; n > max {
		t.Errorf("resume sent %d ticks of the run's %d to a ledger that keeps %d (want at most %d)", n, len(live), keep, max)
	}
	got := l.Since(time.Time{})
	if len(got) != keep {
		t.Fatalf("the ledger holds %d points, want %d", len(got), keep)
	}
	want := live[len(live)-keep:]
	for i := range want {
		if d := diffPoints(want[i], got[i]); d != "" {
			t.Fatalf("point %d (%v): %s", i, want[i].Time, d)
		}
	}
}

func live0KV(t *testing.T, dir string) kvsize.Request {
	t.Helper()
	m, err := readMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m.KVRequest
}

// A WAL whose last segment was torn (a crash mid-write) or overwritten
// with garbage still opens, for writing and for reading, with what came
// before the damage.
func TestTornWALIsRecovered(t *testing.T) {
	f := func(name string, damage func(t *testing.T, seg string)) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			live := liveRunOpen(t, dir, "balanced", 30)
			segs, _ := filepath.Glob(filepath.Join(dir, "wal", "0*"))
			if len(segs) == 0 {
				t.Fatal("no WAL segment")
			}
			damage(t, segs[len(segs)-1])
			run, err := Open(dir)
			if err != nil {
				t.Fatalf("open after damage: %v", err)
			}
			pts, err := run.Points(time.Time{}, time.Time{})
			run.Close()
			if err != nil {
				t.Fatalf("points after damage: %v", err)
			}
			if len(pts) == 0 || len(pts) > len(live) {
				t.Fatalf("after damage %d points, want 1..%d", len(pts), len(live))
			}
			for i := range pts {
				if d := diffPoints(live[i], pts[i]); d != "" {
					t.Fatalf("point %d: %s", i, d)
				}
			}
			rec, err := Create(Options{Dir: dir, Meta: Meta{DirectReads: true, Interval: Duration(time.Second), Window: Duration(5 * time.Second)}})
			if err != nil {
				t.Fatalf("reopen for writing after damage: %v", err)
			}
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
	f("truncated", func(t *testing.T, seg string) {
		st, err := os.Stat(seg)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(seg, st.Size()*2/3); err != nil {
			t.Fatal(err)
		}
	})
	f("garbage tail", func(t *testing.T, seg string) {
		b, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		for i := len(b) * 3 / 4; i < len(b); i++ {
			b[i] ^= 0x5a
		}
		if err := os.WriteFile(seg, b, 0o644); err != nil {
			t.Fatal(err)
		}
	})
}

// promtool, Prometheus' own tool, opens a recording and finds its block
// with the series ptdmon wrote.
func TestPromtoolReadsARecording(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool not found (Debian package prometheus)")
		}
		t.Skip("promtool not found (Debian package prometheus)")
	}
	dir := t.TempDir()
	liveRun(t, dir, "balanced", 20)
	out, err := exec.Command(promtool, "tsdb", "list", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool tsdb list: %v\n%s", err, out)
	}
	if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); len(lines) != 2 {
		t.Fatalf("promtool tsdb list: want one block:\n%s", out)
	}
	out, err = exec.Command(promtool, "tsdb", "dump", "--match", `{__name__="ptd_stage_requests_per_second",stage="decode",window="instant"}`, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool tsdb dump: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "ptd_stage_requests_per_second"); n < 15 {
		t.Errorf("promtool tsdb dump: %d decode rate samples, want about 19:\n%s", n, out)
	}
}
