package record

import (
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// TestRunSaysWhatTheTargetsRead: run.json names each target's engine and
// model as its reads say, and every model the run served, also when a
// target's model changes mid-run (a restart with another model) and when
// a failed read comes between.
func TestRunSaysWhatTheTargetsRead(t *testing.T) {
	dir := t.TempDir()
	rec := testRecording(t, dir)
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second, History: 100, Tap: rec})
	// The configuration names neither engine nor model.
	l.SetTargets([]engine.Target{{Name: "p0", Role: engine.Prefill}, {Name: "d0", Role: engine.Decode}})
	t0 := time.Unix(1_800_000_000, 0)
	for s := 1; s <= 30; s++ {
		at := t0.Add(time.Duration(s) * time.Second)
		for _, target := range []string{"p0", "d0"} {
			sc := ledger.Scrape{Target: target, Time: at.Add(-200 * time.Millisecond), Duration: 10 * time.Millisecond}
			o := &engine.Observation{Engine: engine.SGLang, Role: engine.Prefill, Model: "llama"}
			if target == "d0" {
				o.Role = engine.Decode
				if s > 15 {
					o.Model = "qwen"
				}
			}
			if target == "p0" && s == 10 {
				sc.Err = errors.New("connection refused")
			} else {
				sc.Obs = o
			}
			l.Record(sc)
		}
		l.Tick(at)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := readMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"p0": "llama", "d0": "qwen"}
	for _, tm := range m.Targets {
		if tm.Engine != string(engine.SGLang) || tm.Model != want[tm.Name] {
			t.Errorf("run.json says %s is %s serving %q; its reads say %s serving %q", tm.Name, tm.Engine, tm.Model, engine.SGLang, want[tm.Name])
		}
		delete(want, tm.Name)
	}
	if len(want) != 0 {
		t.Errorf("run.json leaves out %v", want)
	}
	if !slices.Equal(m.Models, []string{"llama", "qwen"}) {
		t.Errorf("run.json lists the models %v; the run served llama, then qwen too", m.Models)
	}
}

// testRecording creates a recording in dir as serve does at a 1 s
// interval and W = 5 s.
func testRecording(t *testing.T, dir string) *Recorder {
	t.Helper()
	rec, err := Create(Options{Dir: dir, Meta: Meta{DirectReads: true, Version: "test", Interval: Duration(time.Second), Window: Duration(5 * time.Second)}})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// Annotate runs on the caller's goroutine while the writer's loop starts
// on its own: `ptdmon record` marks the command's start as soon as the
// recorder is open. Under -race this fails if the loop reads the meta the
// marks change without their lock.
func TestAnnotateAsTheRecorderStarts(t *testing.T) {
	dir := t.TempDir()
	for i := range 20 {
		rec := testRecording(t, filepath.Join(dir, strconv.Itoa(i)))
		if err := rec.Annotate(time.Now(), "start"); err != nil {
			t.Fatal(err)
		}
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		m, err := readMeta(filepath.Join(dir, strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Annotations) != 1 || m.Annotations[0].Text != "start" {
			t.Fatalf("run.json holds the marks %+v, want the one made", m.Annotations)
		}
	}
}

// A run reads directly only while every process of it did: a resume
// that reads a TSDB, or one of a run an earlier version recorded (which
// does not say), makes the whole run's replay read as from a TSDB.
func TestDirectReadsOfEveryProcess(t *testing.T) {
	now := time.Now()
	f := func(old Meta, this, want bool) {
		t.Helper()
		if got := merge(old, Meta{DirectReads: this}, now).DirectReads; got != want {
			t.Errorf("merge(%d processes, direct %v) into direct %v: %v, want %v", len(old.Processes), old.DirectReads, this, got, want)
		}
	}
	f(Meta{}, true, true)
	f(Meta{}, false, false)
	f(Meta{DirectReads: true, Processes: []Process{{Start: now}}}, true, true)
	f(Meta{DirectReads: true, Processes: []Process{{Start: now}}}, false, false)
	f(Meta{Processes: []Process{{Start: now}}}, true, false)
}
