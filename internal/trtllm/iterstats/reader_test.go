package iterstats

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

// Four attention-DP ranks, two frames in one poll. Work fields are summed
// over the ranks of the newest frame; rank-0-owned fields are taken from
// rank 0 only, even when other rows carry (non-zeroed) copies.
func TestRankFanOut(t *testing.T) {
	r, _ := newTestReader(Options{})
	var recs []rec
	for _, f := range []struct {
		iter, seq, completed int
		active               [4]int
		used, max            [4]int
	}{
		{100, 10, 3, [4]int{1, 2, 3, 4}, [4]int{1, 1, 1, 1}, [4]int{100, 100, 100, 100}},
		{101, 11, 2, [4]int{10, 20, 30, 40}, [4]int{10, 20, 30, 40}, [4]int{100, 100, 200, 200}},
	} {
		for rank := 0; rank < 4; rank++ {
			x := rec{
				"timestamp": hostStamp(t0.Add(time.Duration(f.iter-100) * 20 * time.Millisecond)),
				"iter":      f.iter, "statsSequence": f.seq, "attentionDpRank": rank,
				"numActiveRequests":    f.active[rank],
				"numQueuedRequests":    []int{5, 5, 5, 0}[rank], // copied to some rows: neither sum (15) nor last (0)
				"numCompletedRequests": f.completed,
				"numNewActiveRequests": 1,
				"kvCacheStats":         rec{"usedNumBlocks": f.used[rank], "maxNumBlocks": f.max[rank]},
				"iterLatencyMS":        10.0,
			}
			if rank != 0 {
				// Requests listed on a non-zero rank must not be counted.
				x["requestStats"] = []rec{{"id": 7, "stage": "GENERATION_COMPLETE", "disServingStats": rec{"kvCacheTransferMS": 1.5, "kvCacheSize": 4096}}}
			}
			recs = append(recs, x)
		}
	}
	o, _ := mustRead(t, r, body(t, recs...), t0.Add(time.Second))
	// Completed: rank 0's deltas 3 + 2 = 5 (not 4×5 = 20).
	if got := counter(t, o, engine.Completed); got != 5 {
		t.Errorf("Completed = %v, want 5", got)
	}
	// Running: newest frame (iter 101): 10+20+30+40 = 100.
	if got := gauge(t, o, engine.Running); got != 100 {
		t.Errorf("Running = %v, want 100", got)
	}
	// Waiting: rank 0's 5, not 20.
	if got := gauge(t, o, engine.Waiting); got != 5 {
		t.Errorf("Waiting = %v, want 5", got)
	}
	// KVUsage: (10+20+30+40)/(100+100+200+200) = 100/600.
	if got := gauge(t, o, engine.KVUsage); !approx(got, 100.0/600) {
		t.Errorf("KVUsage = %v, want %v", got, 100.0/600)
	}
	if _, ok := o.CounterSum(engine.KVBytes); ok {
		t.Errorf("KV bytes counted from a non-zero rank's requestStats")
	}
	if s := r.Stats(); s.NewActive != 2 || s.Records != 8 {
		t.Errorf("NewActive = %v, Records = %d; want 2, 8", s.NewActive, s.Records)
	}
	// Latency: one value per frame, not per rank row.
	if l := r.LastIteration(); l.N != 2 || l.Mean != 10*time.Millisecond {
		t.Errorf("LastIteration = %+v, want N=2 Mean=10ms", l)
	}
	if o.Engine != engine.TensorRTLLM || o.Role != engine.Decode {
		t.Errorf("engine/role = %v/%v", o.Engine, o.Role)
	}
}

// Cumulative kvCacheStats counters become deltas against a per-rank
// baseline; a decrease resets the baseline and warns once per rank per
// minute.
func TestCumulativeDecreaseResetsBaseline(t *testing.T) {
	r, sink := newTestReader(Options{})
	poll := func(sec float64, iter int, reused0, reused1 int) {
		t.Helper()
		at := t0.Add(time.Duration(sec * float64(time.Second)))
		mustRead(t, r, body(t,
			rec{"iter": iter, "statsSequence": iter, "attentionDpRank": 0, "kvCacheStats": rec{"reusedBlocks": reused0, "missedBlocks": 10}},
			rec{"iter": iter, "statsSequence": iter, "attentionDpRank": 1, "kvCacheStats": rec{"reusedBlocks": reused1, "missedBlocks": 10}},
		), at)
	}
	poll(0, 1, 100, 1000) // baselines 100 and 1000
	poll(1, 2, 150, 1010) // +50, +10
	poll(2, 3, 40, 1020)  // rank 0 decreases: reset to 40; rank 1 +10
	poll(3, 4, 60, 1030)  // +20, +10
	poll(4, 5, 50, 1040)  // rank 0 decreases again within a minute: no second warning; rank 1 +10
	s := r.Stats()
	// Reused: rank 0: 50 + 20 = 70; rank 1: 10+10+10+10 = 40; total 110.
	if s.KVBlocks.Reused != 110 || s.KVBlocks.Missed != 0 || !s.KVBlocks.OK {
		t.Errorf("KVBlocks = %+v, want Reused 110, Missed 0", s.KVBlocks)
	}
	if s.Decreases != 2 {
		t.Errorf("Decreases = %d, want 2", s.Decreases)
	}
	if n := sink.count("decreased"); n != 1 {
		t.Errorf("%d warnings, want 1 (throttled per rank per minute)", n)
	}
	poll(70, 6, 10, 1050) // a minute later rank 0 decreases again: warns again
	poll(71, 7, 20, 5)    // rank 1 decreases: its own first warning
	if n := sink.count("decreased"); n != 3 {
		t.Errorf("%d warnings, want 3", n)
	}
	// Rank 0: 70 + 10 (10→20); rank 1: 40 + 10 (1040→1050).
	if got := r.Stats().KVBlocks.Reused; got != 130 {
		t.Errorf("Reused = %v, want 130", got)
	}
}

// A drained poll: [] before anything was seen is an error that says why;
// after records, it returns the unchanged counters at the poll time and no
// gauges (not zeros).
func TestDrainedPoll(t *testing.T) {
	r, _ := newTestReader(Options{})
	if _, _, err := r.Read([]byte("[]"), t0); !errors.Is(err, ErrEmpty) || !strings.Contains(err.Error(), "enable_iter_perf_stats") {
		t.Fatalf("first empty poll: err = %v, want ErrEmpty", err)
	}
	mustRead(t, r, body(t, rec{"timestamp": hostStamp(t0.Add(900 * time.Millisecond)), "iter": 1, "statsSequence": 1,
		"numCompletedRequests": 4, "numActiveRequests": 9, "numQueuedRequests": 2}), t0.Add(time.Second))
	polled := t0.Add(2 * time.Second)
	o, at, err := r.Read([]byte(" [ ]\n"), polled)
	if err != nil {
		t.Fatal(err)
	}
	if !at.Equal(polled) {
		t.Errorf("sample time %v, want the poll time %v", at, polled)
	}
	if got := counter(t, o, engine.Completed); got != 4 {
		t.Errorf("Completed = %v, want 4 (unchanged)", got)
	}
	for _, m := range []engine.Metric{engine.Running, engine.Waiting, engine.KVUsage} {
		if _, ok := o.Gauge(m); ok {
			t.Errorf("gauge %s present on an empty poll", m)
		}
	}
	if s := r.Stats(); s.EmptyPolls != 2 || s.Polls != 3 {
		t.Errorf("EmptyPolls = %d, Polls = %d; want 2, 3", s.EmptyPolls, s.Polls)
	}
}

// The real fixture: trtllm-serve's /metrics returned [] (aibrix #2004).
func TestFixtureAibrixEmpty(t *testing.T) {
	raw, err := os.ReadFile("testdata/trtllm_issue_2004_aibrix_metrics_json.txt")
	if err != nil {
		t.Fatal(err)
	}
	first, rest, ok := bytes.Cut(raw, []byte("\n"))
	if !ok || !bytes.HasPrefix(first, []byte("# source:")) {
		t.Fatalf("fixture layout changed: %q", first)
	}
	r, _ := newTestReader(Options{})
	_, _, err = r.Read(rest, t0)
	if !errors.Is(err, ErrEmpty) {
		t.Fatalf("err = %v, want ErrEmpty", err)
	}
	// With its comment line the body is not JSON at all.
	if _, _, err := r.Read(raw, t0); !errors.Is(err, ErrNotArray) {
		t.Fatalf("with comment: err = %v, want ErrNotArray", err)
	}
	if s := r.Stats(); s.EmptyPolls != 1 || s.ParseFailures != 1 {
		t.Errorf("stats %+v", s)
	}
}

// The example record of docs/trtllm.md#example-record (single rank, overlap
// scheduler).
func TestExampleRecord(t *testing.T) {
	b, err := os.ReadFile("testdata/example_7_4.json")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := newTestReader(Options{})
	polled := time.Date(2026, 11, 29, 10, 41, 7, 400_000_000, time.UTC)
	o, at, err := r.Read(b, polled)
	if err != nil {
		t.Fatal(err)
	}
	if got := counter(t, o, engine.Completed); got != 1 {
		t.Errorf("Completed = %v, want 1", got)
	}
	if got := gauge(t, o, engine.Running); got != 37 {
		t.Errorf("Running = %v, want 37", got)
	}
	if got := gauge(t, o, engine.Waiting); got != 3 {
		t.Errorf("Waiting = %v, want 3", got)
	}
	if got := gauge(t, o, engine.KVUsage); !approx(got, 12546.0/101256) {
		t.Errorf("KVUsage = %v, want %v", got, 12546.0/101256)
	}
	if _, ok := o.CounterSum(engine.KVBytes); ok {
		t.Error("KV bytes without requestStats")
	}
	// First poll: the offset is this poll's difference, so the sample time
	// is the poll time itself; the offset is 400 ms − 318.402 ms.
	if !at.Equal(polled) {
		t.Errorf("sample time %v, want %v", at, polled)
	}
	if s := r.Stats(); !s.HasClockOffset || s.ClockOffset != 81598*time.Microsecond {
		t.Errorf("ClockOffset = %v, want 81.598ms", s.ClockOffset)
	}
	l := r.LastIteration()
	if l.N != 1 || l.Mean != 21730*time.Microsecond || l.P99 != l.Mean || l.Mode != "overlap" || !l.Overlap {
		t.Errorf("LastIteration = %+v", l)
	}
	if d, src, ok := l.Loop(); !ok || d != 10920*time.Microsecond || src != "hostStepTimeMS" {
		t.Errorf("Loop = %v %q %v, want 10.92ms from hostStepTimeMS", d, src, ok)
	}
	if !hasNote(o, "overlap") {
		t.Errorf("no overlap note: %q", o.Notes)
	}
	// Baselines are set; nothing counted yet.
	if s := r.Stats(); s.KVBlocks.Reused != 0 || !s.KVBlocks.OK {
		t.Errorf("KVBlocks %+v", s.KVBlocks)
	}
}

// Overlap vs non-overlap: the per-loop estimate halves iterLatencyMS only
// in overlap mode when hostStepTimeMS is absent.
func TestLoopEstimateByMode(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want time.Duration
		note bool
	}{{"overlap", 10 * time.Millisecond, true}, {"non_overlap", 20 * time.Millisecond, false}} {
		r, _ := newTestReader(Options{})
		o, _ := mustRead(t, r, body(t,
			rec{"iter": 1, "iterLatencyMS": 18.0, "schedulerMode": tc.mode},
			rec{"iter": 2, "iterLatencyMS": 22.0, "schedulerMode": tc.mode},
		), t0)
		if d, _, ok := r.LastIteration().Loop(); !ok || d != tc.want {
			t.Errorf("%s: Loop = %v, want %v", tc.mode, d, tc.want)
		}
		if hasNote(o, "overlap") != tc.note {
			t.Errorf("%s: notes %q", tc.mode, o.Notes)
		}
	}
}

// More records than MaxBuffered: the oldest (by iter) are dropped, counted
// and warned about once.
func TestBufferOverflow(t *testing.T) {
	r, sink := newTestReader(Options{MaxBuffered: 3})
	// Body order 5,1,4,2,3: kept must be iters 3,4,5.
	var recs []rec
	for _, it := range []int{5, 1, 4, 2, 3} {
		recs = append(recs, rec{"iter": it, "statsSequence": it, "numCompletedRequests": it * 10, "numActiveRequests": it})
	}
	o, _ := mustRead(t, r, body(t, recs...), t0)
	if got := counter(t, o, engine.Completed); got != 30+40+50 {
		t.Errorf("Completed = %v, want 120 (iters 3..5)", got)
	}
	if got := gauge(t, o, engine.Running); got != 5 {
		t.Errorf("Running = %v, want 5", got)
	}
	if !hasNote(o, "2 iteration records dropped") {
		t.Errorf("notes %q", o.Notes)
	}
	s := r.Stats()
	if s.DroppedBuffer != 2 || s.Dropped != 2 || s.Records != 5 {
		t.Errorf("stats %+v, want 2 dropped of 5", s)
	}
	mustRead(t, r, body(t, recs...), t0.Add(time.Second))
	if s := r.Stats(); s.DroppedBuffer != 4 {
		t.Errorf("DroppedBuffer = %d, want 4", s.DroppedBuffer)
	}
	if n := sink.count("dropped"); n != 1 {
		t.Errorf("%d drop warnings, want 1 (throttled)", n)
	}
}

// Records out of order are processed by iter then statsSequence, never by
// timestamp: cumulative counters do not see a false decrease, and the
// gauges come from the highest iteration.
func TestOutOfOrder(t *testing.T) {
	r, _ := newTestReader(Options{})
	mk := func(iter, seq int, ts time.Time, reused, active int) rec {
		return rec{"timestamp": hostStamp(ts), "iter": iter, "statsSequence": seq, "numActiveRequests": active,
			"numCompletedRequests": 1, "kvCacheStats": rec{"reusedBlocks": reused}}
	}
	// The newest iteration (12) carries an older timestamp than iter 11:
	// timestamps lie, iter does not.
	b := body(t,
		mk(12, 3, t0.Add(100*time.Millisecond), 130, 7),
		mk(10, 1, t0.Add(150*time.Millisecond), 100, 5),
		mk(11, 2, t0.Add(200*time.Millisecond), 120, 6),
	)
	o, _ := mustRead(t, r, b, t0.Add(time.Second))
	if got := gauge(t, o, engine.Running); got != 7 {
		t.Errorf("Running = %v, want 7 (iter 12)", got)
	}
	s := r.Stats()
	if s.Decreases != 0 || s.KVBlocks.Reused != 30 {
		t.Errorf("Decreases = %d, Reused = %v; want 0, 30", s.Decreases, s.KVBlocks.Reused)
	}
	// The offset comes from iter 12's timestamp: 1 s − 100 ms.
	if s.ClockOffset != 900*time.Millisecond {
		t.Errorf("ClockOffset = %v, want 900ms", s.ClockOffset)
	}
	// Same iter, sequence decides.
	r2, _ := newTestReader(Options{})
	o, _ = mustRead(t, r2, body(t,
		rec{"iter": 5, "statsSequence": 9, "numActiveRequests": 2},
		rec{"iter": 5, "statsSequence": 8, "numActiveRequests": 1},
	), t0)
	if got := gauge(t, o, engine.Running); got != 2 {
		t.Errorf("Running = %v, want 2 (sequence 9)", got)
	}
}

// KV transfers from requestStats are counted once per request id, across
// polls, when the transfer is done; ids above 2^53 stay distinct.
func TestKVDedupeLargeIDs(t *testing.T) {
	const (
		a uint64 = 1<<53 + 1 // float64(a) == float64(b)
		b uint64 = 1 << 53
		c uint64 = 18446744073709551615
	)
	rs := func(id any, stage string, ms float64, size int) rec {
		return rec{"id": id, "stage": stage, "disServingStats": rec{"kvCacheTransferMS": ms, "kvCacheSize": size}}
	}
	r, _ := newTestReader(Options{})
	poll := func(sec int, reqs ...rec) *engine.Observation {
		t.Helper()
		o, _ := mustRead(t, r, body(t, rec{"iter": sec, "statsSequence": sec, "attentionDpRank": 0, "requestStats": reqs}), t0.Add(time.Duration(sec)*time.Second))
		return o
	}
	// Poll 1: a is still transferring (not counted), b is done (1000 B).
	o := poll(1, rs(a, "CONTEXT_IN_PROGRESS", 0, 0), rs(b, "CONTEXT_IN_PROGRESS", 3.5, 1000))
	if got := counter(t, o, engine.KVBytes); got != 1000 {
		t.Errorf("poll 1 KVBytes = %v, want 1000", got)
	}
	// Poll 2: a done by stage (2000 B), b repeated; c as a string id (4000 B).
	o = poll(2, rs(a, "GENERATION_IN_PROGRESS", 0, 2000), rs(b, "GENERATION_IN_PROGRESS", 3.5, 1000), rs("18446744073709551615", "GENERATION_COMPLETE", 2, 4000))
	// Poll 3: all three again, and c as a number.
	o2 := poll(3, rs(a, "GENERATION_COMPLETE", 1, 2000), rs(b, "GENERATION_COMPLETE", 3.5, 1000), rs(c, "GENERATION_COMPLETE", 2, 4000))
	if o != o2 {
		t.Error("observation not reused")
	}
	if got := counter(t, o2, engine.KVBytes); got != 7000 {
		t.Errorf("KVBytes = %v, want 7000 (1000+2000+4000, each once)", got)
	}
	if got := counter(t, o2, engine.KVTransfers); got != 3 {
		t.Errorf("KVTransfers = %v, want 3", got)
	}
	// A record without requestStats does not make KV absent again.
	o = poll(4)
	if got := counter(t, o, engine.KVBytes); got != 7000 {
		t.Errorf("KVBytes = %v, want 7000", got)
	}
}

// The dedupe set is bounded: the oldest ids are forgotten first.
func TestKVDedupeBounded(t *testing.T) {
	r, _ := newTestReader(Options{MaxTrackedRequests: 2})
	done := func(id int) rec {
		return rec{"id": id, "stage": "GENERATION_COMPLETE", "disServingStats": rec{"kvCacheTransferMS": 1, "kvCacheSize": 10}}
	}
	mustRead(t, r, body(t, rec{"iter": 1, "requestStats": []rec{done(1), done(2), done(3)}}), t0)
	if len(r.kvSeen) != 2 {
		t.Errorf("tracked %d ids, want 2", len(r.kvSeen))
	}
	o, _ := mustRead(t, r, body(t, rec{"iter": 2, "requestStats": []rec{done(3)}}), t0.Add(time.Second))
	if got := counter(t, o, engine.KVBytes); got != 30 {
		t.Errorf("KVBytes = %v, want 30", got)
	}
}

// The engine host's clock runs 3 s ahead of ptdmon's. Each poll reaches the
// newest record after a different delay; the returned sample time is the
// record's true time plus the least delay seen so far (never more than this
// poll's delay), and it keeps the poll time's monotonic reading.
func TestSampleTimeEstimate(t *testing.T) {
	r, _ := newTestReader(Options{})
	base := time.Now() // with a monotonic reading
	skew := 3 * time.Second
	delaysMS := []int{80, 30, 120, 5, 60, 200, 40}
	least := time.Duration(1 << 62)
	for k, ms := range delaysMS {
		d := time.Duration(ms) * time.Millisecond
		truth := base.Add(time.Duration(k) * time.Second) // record built (ptdmon clock)
		polled := truth.Add(d)
		o, at := mustRead(t, r, body(t, rec{"timestamp": hostStamp(truth.Add(skew)), "iter": k + 1, "statsSequence": k + 1, "numCompletedRequests": 1}), polled)
		least = min(least, d)
		// The stamp has microsecond precision.
		if err := at.Sub(truth) - least; err < -time.Microsecond || err > time.Microsecond {
			t.Errorf("poll %d: sample %v after truth, want %v", k, at.Sub(truth), least)
		}
		if at.After(polled) {
			t.Errorf("poll %d: sample after the poll", k)
		}
		if !strings.Contains(at.String(), " m=") { // String shows the monotonic reading
			t.Errorf("poll %d: monotonic reading lost", k)
		}
		if got := counter(t, o, engine.Completed); got != float64(k+1) {
			t.Errorf("poll %d: Completed = %v", k, got)
		}
	}
	// Offset = −3 s + least delay (5 ms), to the microsecond.
	if off := r.Stats().ClockOffset; (off - (-skew + 5*time.Millisecond)).Abs() > time.Microsecond {
		t.Errorf("ClockOffset = %v, want −2.995s", off)
	}
}

// Records without timestamps fall back to the poll time, with a note.
func TestSampleTimeFallback(t *testing.T) {
	r, _ := newTestReader(Options{})
	o, at := mustRead(t, r, body(t, rec{"iter": 1, "numCompletedRequests": 2}), t0)
	if !at.Equal(t0) || !hasNote(o, "no timestamp") || r.Stats().TimeFallbacks != 1 {
		t.Errorf("at %v notes %q", at, o.Notes)
	}
	// An unparsable timestamp is no timestamp.
	o, at = mustRead(t, r, body(t, rec{"iter": 2, "timestamp": "2026-11-29T10:00:00Z"}), t0.Add(time.Second))
	if !at.Equal(t0.Add(time.Second)) || !hasNote(o, "no timestamp") {
		t.Errorf("at %v notes %q", at, o.Notes)
	}
}

// Sample times never go backwards, even for records delivered late.
func TestSampleTimeMonotone(t *testing.T) {
	r, _ := newTestReader(Options{})
	mustRead(t, r, body(t, rec{"iter": 1, "timestamp": hostStamp(t0)}), t0.Add(10*time.Millisecond))
	_, at1 := mustRead(t, r, []byte("[]"), t0.Add(time.Second))
	// Built before the empty poll, delivered after it.
	o, at2 := mustRead(t, r, body(t, rec{"iter": 2, "timestamp": hostStamp(t0.Add(500 * time.Millisecond))}), t0.Add(2*time.Second))
	if !at2.After(at1) || r.Stats().TimeClamped != 1 || !hasNote(o, "moved just after") {
		t.Errorf("at1 %v at2 %v clamped %d", at1, at2, r.Stats().TimeClamped)
	}
}

// A host clock that steps back is noticed after ClockWindow polls.
func TestClockStepBack(t *testing.T) {
	r, sink := newTestReader(Options{ClockWindow: 4})
	for k := 0; k < 10; k++ {
		truth := t0.Add(time.Duration(k) * time.Second)
		host := truth
		if k >= 3 {
			host = truth.Add(-time.Hour) // host clock stepped back an hour
		}
		_, at := mustRead(t, r, body(t, rec{"iter": k, "timestamp": hostStamp(host)}), truth.Add(10*time.Millisecond))
		if k >= 6 { // 4 polls after the step the estimate is rebased
			if d := at.Sub(truth); d != 10*time.Millisecond {
				t.Errorf("poll %d: sample %v after truth, want 10ms", k, d)
			}
		}
	}
	if s := r.Stats(); s.ClockRebases != 1 || sink.count("clock stepped back") != 1 {
		t.Errorf("ClockRebases = %d", s.ClockRebases)
	}
}

// Frames that neither arrive nor are reported dropped were taken by another
// reader of the endpoint; frames the engine reports dropping are counted
// as dropped.
func TestSequenceGaps(t *testing.T) {
	r, sink := newTestReader(Options{})
	frames := func(dropped int, seqs ...int) []byte {
		var recs []rec
		for _, s := range seqs {
			for rank := 0; rank < 2; rank++ { // two rank rows per frame share a sequence
				recs = append(recs, rec{"iter": s * 2, "statsSequence": s, "statsDroppedFrames": dropped, "attentionDpRank": rank})
			}
		}
		return body(t, recs...)
	}
	mustRead(t, r, frames(0, 1, 2, 3), t0)
	o, _ := mustRead(t, r, frames(0, 6, 7), t0.Add(time.Second)) // 4, 5 taken by someone else
	if s := r.Stats(); s.Missing != 2 || s.Dropped != 0 {
		t.Errorf("Missing = %d Dropped = %d, want 2, 0", s.Missing, s.Dropped)
	}
	if !hasNote(o, "only consumer") || sink.count("only consumer") != 1 {
		t.Errorf("notes %q", o.Notes)
	}
	mustRead(t, r, frames(2, 10, 11), t0.Add(2*time.Second)) // 8, 9 dropped by the engine
	if s := r.Stats(); s.Missing != 2 || s.DroppedEngine != 2 || s.Dropped != 2 {
		t.Errorf("Missing = %d DroppedEngine = %d Dropped = %d, want 2, 2, 2", s.Missing, s.DroppedEngine, s.Dropped)
	}
	// Engine restart: sequence and drop count start over; nothing missing.
	mustRead(t, r, frames(0, 1, 2), t0.Add(3*time.Second))
	if s := r.Stats(); s.Missing != 2 || s.Decreases != 1 {
		t.Errorf("after restart Missing = %d Decreases = %d", s.Missing, s.Decreases)
	}
}

func TestNotAnArray(t *testing.T) {
	for _, in := range []string{"", "  ", "{}", "null", `"[]"`, "42", "# comment\n[]", "]"} {
		r, _ := newTestReader(Options{})
		_, _, err := r.Read([]byte(in), t0)
		if !errors.Is(err, ErrNotArray) {
			t.Errorf("%q: err = %v, want ErrNotArray", in, err)
		}
	}
}

// A damaged array keeps what was decoded before the damage (the endpoint
// drained it), with a note; with nothing decoded it is an error.
func TestDamagedArray(t *testing.T) {
	r, _ := newTestReader(Options{})
	if _, _, err := r.Read([]byte(`[{"iter":1,`), t0); err == nil {
		t.Error("truncated first record: no error")
	}
	o, _, err := r.Read([]byte(`[{"iter":1,"numCompletedRequests":3},{"iter":2,"numCompl`), t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got := counter(t, o, engine.Completed); got != 3 || !hasNote(o, "damaged") {
		t.Errorf("Completed = %v notes %q", got, o.Notes)
	}
	if s := r.Stats(); s.ParseFailures != 2 {
		t.Errorf("ParseFailures = %d, want 2", s.ParseFailures)
	}
}

// Unknown is not zero: missing, null and mistyped fields stay unknown;
// unknown keys and non-object elements are skipped.
func TestTolerantFields(t *testing.T) {
	r, _ := newTestReader(Options{})
	o, _ := mustRead(t, r, []byte(`[1, null, {}, "x",
		{"iter": 3, "numCompletedRequests": null, "numActiveRequests": "7", "numQueuedRequests": 2,
		 "kvCacheStats": 5, "futureField": {"a": [1,2]}, "requestStats": [{"id": 1.5e3, "stage": "GENERATION_COMPLETE",
		 "disServingStats": {"kvCacheTransferMS": 1, "kvCacheSize": 10}}]}]`), t0)
	if _, ok := o.CounterSum(engine.Completed); ok {
		t.Error("Completed present though never reported")
	}
	if _, ok := o.Gauge(engine.Running); ok {
		t.Error("Running from a string")
	}
	if _, ok := o.Gauge(engine.KVUsage); ok {
		t.Error("KVUsage without kvCacheStats")
	}
	if got := gauge(t, o, engine.Waiting); got != 2 {
		t.Errorf("Waiting = %v", got)
	}
	if _, ok := o.CounterSum(engine.KVBytes); ok {
		t.Error("KV counted for a non-integer id")
	}
	if s := r.Stats(); s.SkippedRecords != 4 || s.Records != 1 {
		t.Errorf("Skipped = %d Records = %d, want 4, 1", s.SkippedRecords, s.Records)
	}
	// numCompletedRequests 0 is a known 0: the counter appears at 0.
	o, _ = mustRead(t, r, body(t, rec{"iter": 4, "numCompletedRequests": 0}), t0.Add(time.Second))
	if got := counter(t, o, engine.Completed); got != 0 {
		t.Errorf("Completed = %v", got)
	}
}

func TestParseHostTime(t *testing.T) {
	for in, want := range map[string]time.Time{
		"11-29-2026 10:41:07.318402":    time.Date(2026, 11, 29, 10, 41, 7, 318402000, time.UTC),
		"01-02-2026 03:04:05":           time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		"01-02-2026 03:04:05.5":         time.Date(2026, 1, 2, 3, 4, 5, 500000000, time.UTC),
		"01-02-2026 03:04:05.123456789": time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC),
	} {
		got, ok := parseHostTime([]byte(in))
		if !ok || !got.Equal(want) {
			t.Errorf("%q: %v %v, want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"02-31-2026 00:00:00", "13-01-2026 00:00:00", "11-29-2026 10:41:07.", "11-29-2026T10:41:07", "11-29-2026 10:41:07.1234567890", "1-29-2026 10:41:07"} {
		if _, ok := parseHostTime([]byte(in)); ok {
			t.Errorf("%q accepted", in)
		}
	}
}

// A frame repeating a rank (e.g. rows gathered from several TP ranks of one
// DP group) counts that rank once.
func TestDuplicateRankRows(t *testing.T) {
	r, _ := newTestReader(Options{})
	row := func(rank, active int) rec {
		return rec{"iter": 7, "statsSequence": 3, "attentionDpRank": rank, "numActiveRequests": active, "numCompletedRequests": 4}
	}
	o, _ := mustRead(t, r, body(t, row(0, 10), row(1, 20), row(0, 10), row(1, 20)), t0)
	if got := counter(t, o, engine.Completed); got != 4 {
		t.Errorf("Completed = %v, want 4", got)
	}
	if got := gauge(t, o, engine.Running); got != 30 {
		t.Errorf("Running = %v, want 30", got)
	}
	if s := r.Stats(); s.DuplicateRows != 2 {
		t.Errorf("DuplicateRows = %d, want 2", s.DuplicateRows)
	}
	// Rows with neither iter nor sequence are not merged.
	o, _ = mustRead(t, r, body(t, rec{"numCompletedRequests": 1}, rec{"numCompletedRequests": 2}), t0.Add(time.Second))
	if got := counter(t, o, engine.Completed); got != 7 {
		t.Errorf("Completed = %v, want 7", got)
	}
}
