package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/record"
)

// quickRound records secs ticks of a prefill and a decode target from
// start into dir, as one serve -record process that stops (its head cut
// into a block), resuming what dir holds.
func quickRound(t *testing.T, dir string, start time.Time, secs int) {
	t.Helper()
	rec, err := record.Create(record.Options{Dir: dir, Meta: record.Meta{Version: "test", Interval: record.Duration(time.Second), Window: record.Duration(5 * time.Second)}})
	if err != nil {
		t.Fatal(err)
	}
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second, History: 1000, Tap: rec})
	if _, err := rec.Resume(l); err != nil {
		t.Fatal(err)
	}
	l.SetTargets([]engine.Target{{Name: "p0", Role: engine.Prefill, Engine: engine.VLLM}, {Name: "d0", Role: engine.Decode, Engine: engine.VLLM}})
	for s := 1; s <= secs; s++ {
		at := start.Add(time.Duration(s) * time.Second)
		for _, tg := range []struct {
			name string
			role engine.Role
		}{{"p0", engine.Prefill}, {"d0", engine.Decode}} {
			o := &engine.Observation{Engine: engine.VLLM, Role: tg.role, Model: "m",
				Counters: []engine.CounterValue{{Metric: engine.Completed, Series: 1, Value: float64(7 * s)}}}
			l.Record(ledger.Scrape{Target: tg.name, Time: at.Add(-300 * time.Millisecond), Obs: o})
		}
		l.Tick(at)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
}

func blockDirs(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && len(e.Name()) == 26 {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// report refuses what is not two runs (one path twice, a copy of one run)
// and what is not one run (a folder with another run's block, another
// run's run.json): one line naming what is wrong, exit 2 for the first
// and 1 for the second. A damaged recording reports what is readable and
// says what was lost.
func TestReportRefusesWhatIsNotOneRun(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	quickRound(t, a, t0, 40)
	quickRound(t, a, t0.Add(time.Hour), 40)
	quickRound(t, b, t0.Add(3*time.Hour), 40)
	f := func(name string, code int, want string, prep func(dir string) []string) {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			copyTree(t, a, dir)
			args := prep(dir)
			var o, e strings.Builder
			got := dispatch(append([]string{"report", "-format", "md"}, args...), &o, &e)
			want = strings.ReplaceAll(want, "DIR", dir)
			text := e.String()
			if code == 0 {
				text = o.String()
			}
			if got != code || !strings.Contains(text, want) {
				t.Fatalf("report %v: exit %d, want %d with %q; stderr:\n%s", args, got, code, want, e.String())
			}
			if code != 0 && strings.Count(strings.TrimSpace(e.String()), "\n") > 1 {
				t.Errorf("more than one line of error (and the usage hint):\n%s", e.String())
			}
		})
	}
	f("two runs", 0, "| configuration hash |", func(dir string) []string { return []string{dir, b} })
	f("one path twice", 2, "the same file", func(dir string) []string { return []string{dir, dir} })
	f("a copy of the run", 2, "are one run", func(dir string) []string {
		cp := filepath.Join(filepath.Dir(dir), "copy")
		copyTree(t, dir, cp)
		return []string{dir, cp}
	})
	f("another run's block", 1, "(run ", func(dir string) []string {
		blk := blockDirs(t, b)[0]
		copyTree(t, filepath.Join(b, blk), filepath.Join(dir, blk))
		return []string{dir}
	})
	f("another run's run.json", 1, "is not one run", func(dir string) []string {
		js, err := os.ReadFile(filepath.Join(b, record.MetaFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, record.MetaFile), js, 0o644); err != nil {
			t.Fatal(err)
		}
		return []string{dir}
	})
	f("a truncated chunk file", 0, "chunks/000001: cut short", func(dir string) []string {
		p := filepath.Join(dir, blockDirs(t, dir)[0], "chunks", "000001")
		if err := os.Truncate(p, 100); err != nil {
			t.Fatal(err)
		}
		return []string{dir}
	})
}

// report and replay give the same exit status for the same bad run.json:
// 1, a recording that cannot be read, not a usage error.
func TestBadRunJSONExitsAlike(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	quickRound(t, dir, time.Unix(1_800_000_000, 0), 10)
	if err := os.WriteFile(filepath.Join(dir, record.MetaFile), []byte("{\"version\": "), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"report", "replay"} {
		var o, e strings.Builder
		if code := dispatch([]string{cmd, dir}, &o, &e); code != 1 || !strings.Contains(e.String(), record.MetaFile) {
			t.Errorf("%s on a bad run.json: exit %d, want 1 naming it; stderr:\n%s", cmd, code, e.String())
		}
	}
}

// A recording whose one block is cut short has nothing readable: report
// and replay say so in one line naming the file, and exit 1.
func TestNothingReadableNamesTheFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	quickRound(t, dir, time.Unix(1_800_000_000, 0), 10)
	chunk := filepath.Join(blockDirs(t, dir)[0], "chunks", "000001")
	if err := os.Truncate(filepath.Join(dir, chunk), 100); err != nil {
		t.Fatal(err)
	}
	// A copy of the block alone: the WAL, which still holds the span,
	// is not there.
	if err := os.RemoveAll(filepath.Join(dir, "wal")); err != nil {
		t.Fatal(err)
	}
	old := serveContext
	t.Cleanup(func() { serveContext = old })
	serveContext = func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), 2*time.Second)
	}
	for _, cmd := range []string{"report", "replay"} {
		var o, e strings.Builder
		code := dispatch([]string{cmd, dir}, &o, &e)
		if code != 1 || !strings.Contains(e.String(), chunk) || strings.Count(strings.TrimSpace(e.String()), "\n") > 1 {
			t.Errorf("%s on a recording cut short: exit %d, want 1 and a line naming %s; stderr:\n%s", cmd, code, chunk, e.String())
		}
	}
}

// The report is titled with the run's name: its recording's directory.
func TestReportTitleNamesTheRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "8k-p3d3")
	quickRound(t, dir, time.Unix(1_800_000_000, 0), 40)
	for _, c := range []struct{ format, want string }{{"md", "# ptdmon report: 8k-p3d3\n"}, {"html", "<title>8k-p3d3 · ptdmon report"}} {
		var o, e strings.Builder
		if code := dispatch([]string{"report", "-format", c.format, dir + "/"}, &o, &e); code != 0 || !strings.Contains(o.String(), c.want) {
			t.Errorf("report -format %s: exit %d, no %q: %s", c.format, code, c.want, e.String())
		}
	}
}
