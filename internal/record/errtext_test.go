package record

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/scrape"
)

// failingRun records n ticks of two targets whose every scrape fails
// with a text of its own (a local port and a byte count, as a reset
// connection's error reads), and returns the live points. before, if
// set, runs on the recorder before the first input.
func failingRun(t *testing.T, dir string, n int, before func(*Recorder)) (*Recorder, []ledger.Point) {
	t.Helper()
	rec := testRecording(t, dir)
	if before != nil {
		before(rec)
	}
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second, History: n + 1, Tap: rec})
	l.SetTargets([]engine.Target{{Name: "p0", Role: engine.Prefill, Engine: engine.VLLM}, {Name: "d0", Role: engine.Decode, Engine: engine.VLLM}})
	var pts []ledger.Point
	for i := 0; i < n; i++ {
		at := epoch.Add(time.Duration(i) * time.Second)
		l.Record(ledger.Scrape{Target: "p0", Time: at.Add(-300 * time.Millisecond), Reason: scrape.ReasonRead,
			Err: fmt.Errorf("read tcp 127.0.0.1:%d->10.0.0.1:8000: read %d bytes: connection reset by peer", 32768+i%28000, 1000+i)})
		// The other target's text stays the same: one line in the file.
		l.Record(ledger.Scrape{Target: "d0", Time: at.Add(-200 * time.Millisecond), Reason: scrape.ReasonTimeout,
			Err: fmt.Errorf("context deadline exceeded")})
		pts = append(pts, l.Tick(at))
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return rec, pts
}

// TestFailureTextsBounded: 10,000 failures with 10,000 distinct texts add
// no series and no cache entry per text; the texts are kept on the side,
// and a replay says of each failure what the live ledger said.
func TestFailureTextsBounded(t *testing.T) {
	const n = 10_000
	dir := t.TempDir()
	rec, live := failingRun(t, dir, n, nil)
	// Per target: the marker of its one failure class, order, duration,
	// bytes and samples; plus the ticks' own series.
	if got := len(rec.app.refs); got > 40 {
		t.Errorf("the recorder caches %d series references after %d distinct error texts", got, n)
	}
	run, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if got := seriesCount(t, run); got > 40 {
		t.Errorf("the recording has %d series after %d distinct error texts", got, n)
	}
	st, err := os.Stat(filepath.Join(dir, ErrorsFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > maxErrorsFile {
		t.Errorf("%s is %d bytes, over its bound %d", ErrorsFile, st.Size(), maxErrorsFile)
	}
	replayed, err := run.Points(time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(replayed) != len(live) {
		t.Fatalf("replay has %d points, live had %d", len(replayed), len(live))
	}
	for _, i := range []int{0, 1, 2, n / 2, n - 1} {
		if d := diffPoints(live[i], replayed[i]); d != "" {
			t.Fatalf("point %d: %s", i, d)
		}
	}
}

// TestFailureTextsCut: once the texts' file is full, failures are still
// recorded with their class, run.json says from when texts are missing,
// and a replay names those failures by class.
func TestFailureTextsCut(t *testing.T) {
	dir := t.TempDir()
	const limit = 4096
	_, live := failingRun(t, dir, 100, func(r *Recorder) { r.errs.max = limit })
	st, err := os.Stat(filepath.Join(dir, ErrorsFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > limit {
		t.Errorf("%s is %d bytes, over its bound %d", ErrorsFile, st.Size(), limit)
	}
	run, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	cut := run.Meta().ErrorTextsCut
	if cut.IsZero() {
		t.Fatal("run.json does not say when the texts were cut")
	}
	replayed, err := run.Points(time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	last := len(live) - 1
	if !live[last].Time.After(cut) {
		t.Fatalf("the cut at %v is after the last point", cut)
	}
	// Before the cut the texts are the live ones; after it the class.
	if d := diffPoints(live[0], replayed[0]); d != "" {
		t.Errorf("point 0, before the cut: %s", d)
	}
	want := "down: scrape failed: read"
	if got := replayed[last].Instances[instanceIndex(replayed[last], "p0")].Instant.Why; got != want {
		t.Errorf("after the cut p0 reads %q, want %q", got, want)
	}
}

func instanceIndex(p ledger.Point, target string) int {
	for i, ip := range p.Instances {
		if ip.Target == target {
			return i
		}
	}
	return -1
}

// seriesCount is the number of series in the recording.
func seriesCount(t *testing.T, run *Run) int {
	t.Helper()
	q, err := run.src.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ss := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, ".+"))
	n := 0
	for ss.Next() {
		n++
	}
	if err := ss.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}
