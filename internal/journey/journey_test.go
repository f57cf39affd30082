package journey

import (
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// legs of one request: prefill arrives at a, queue 0.1, prefill 0.2, ends
// at a+0.31; decode arrives at a+0.32, scheduled at a+0.5, decode 1 s.
func legs(trace, id string, a float64) (p, d Leg) {
	p = Leg{TraceID: trace, RequestID: id, Pool: "llama", Instance: "p0", Start: at(a), End: at(a + 0.31),
		Queue: 0.1, TTFT: 0.305, Prefill: 0.2, Decode: 0, E2E: 0.31, MaxTokens: 1, PromptTokens: 100, CompletionTokens: 1}
	d = Leg{TraceID: trace, RequestID: id, Pool: "llama", Instance: "d0", Start: at(a + 0.32), End: at(a + 1.53),
		Queue: 0.17, TTFT: 0.2, Prefill: 0.02, Decode: 1, E2E: 1.21, MaxTokens: 64, PromptTokens: 100, CompletionTokens: 64}
	return p, d
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestJoinOrderAndKeys(t *testing.T) {
	want := map[Phase]float64{PhaseQueue: 0.1, PhasePrefill: 0.2, PhaseKVTransfer: 0.5 - 0.31, PhaseDecode: 1.02}
	f := func(name string, mod func(p, d *Leg), decodeFirst bool) {
		t.Run(name, func(t *testing.T) {
			p, d := legs("t1", "r1", 0)
			mod(&p, &d)
			l := NewBook(0)
			if decodeFirst {
				l.Add(Batch{Legs: []Leg{d}})
				l.Add(Batch{Legs: []Leg{p}})
			} else {
				l.Add(Batch{Legs: []Leg{p, d}})
			}
			recs := l.Records()
			if len(recs) != 1 || !recs[0].Complete() {
				t.Fatalf("records %+v, want one joined", recs)
			}
			for ph, w := range want {
				if v, ok := recs[0].Phase(ph); !ok || !near(v, w) {
					t.Errorf("%s = %v (%v), want %v", ph, v, ok, w)
				}
			}
			if recs[0].Absent[PhaseDecodeQueue] != reasonInseparate {
				t.Errorf("decode_queue: %q", recs[0].Absent[PhaseDecodeQueue])
			}
			if !near(recs[0].E2E, 1.53) || !near(recs[0].TTFT, 0.52) {
				t.Errorf("e2e %v ttft %v", recs[0].E2E, recs[0].TTFT)
			}
		})
	}
	f("by trace", func(p, d *Leg) {}, false)
	f("decode first", func(p, d *Leg) {}, true)
	f("by request id", func(p, d *Leg) { d.TraceID = "t2" }, true)
	f("by trace without ids", func(p, d *Leg) { p.RequestID, d.RequestID = "", "" }, false)
	// Two full legs (no max_tokens 1): the earlier one is the prefill leg.
	f("no max_tokens", func(p, d *Leg) { p.MaxTokens, d.MaxTokens = -1, -1 }, true)
}

// Two requests in one trace (an agent's two calls) stay two, whatever
// order their legs come in.
func TestOneTraceTwoRequests(t *testing.T) {
	p1, d1 := legs("t1", "r1", 0)
	p2, d2 := legs("t1", "r2", 2)
	l := NewBook(0)
	l.Add(Batch{Legs: []Leg{d1, p2, d2, p1}})
	recs := l.Records()
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2: %+v", len(recs), recs)
	}
	for _, r := range recs {
		if !r.Complete() || !near(r.E2E, 1.53) {
			t.Errorf("%s: legs %q, e2e %v", r.ID, r.Legs, r.E2E)
		}
	}
	// One request whose proxy gave its legs different ids is still one.
	p, d := legs("t3", "p-1", 0)
	d.RequestID = "d-1"
	l = NewBook(0)
	l.Add(Batch{Legs: []Leg{d, p}})
	if recs := l.Records(); len(recs) != 1 || !recs[0].Complete() {
		t.Errorf("legs with two ids: %+v", recs)
	}
}

func TestJoinAbsent(t *testing.T) {
	p, d := legs("t1", "r1", 0)
	r := join(&p, nil, nil)
	if r.Legs != "prefill" || r.Absent[PhaseDecode] != reasonNoDecode || r.Absent[PhaseKVTransfer] != reasonNoDecode {
		t.Errorf("prefill only: %+v", r)
	}
	if v, ok := r.Phase(PhasePrefill); !ok || !near(v, 0.2) {
		t.Errorf("prefill only: prefill %v %v", v, ok)
	}
	r = join(nil, &d, nil)
	if r.Legs != "decode" || r.Absent[PhaseKVTransfer] != reasonNoPrefill {
		t.Errorf("decode only: %+v", r)
	}
	q := p
	q.TTFT = -1
	r = join(&q, &d, nil)
	if _, ok := r.Phase(PhasePrefill); ok || r.Absent[PhasePrefill] != missing(AttrTTFT) {
		t.Errorf("no ttft: %+v", r)
	}
	// The decode engine's clock runs 0.3 s behind: the gap turns negative.
	e := d
	e.Start = e.Start.Add(-300 * time.Millisecond)
	r = join(&p, &e, nil)
	if _, ok := r.Phase(PhaseKVTransfer); ok || r.Absent[PhaseKVTransfer] != reasonNegative {
		t.Errorf("skewed: %+v", r)
	}
	// With a KV span the queue on decode is what the transfer left of it.
	kv := KVSpan{TraceID: "t1", Start: at(0.35), End: at(0.45)}
	r = join(&p, &d, &kv)
	if v, _ := r.Phase(PhaseKVTransfer); !near(v, 0.1) {
		t.Errorf("kv span: kv %v", v)
	}
	if v, ok := r.Phase(PhaseDecodeQueue); !ok || !near(v, 0.07) {
		t.Errorf("kv span: decode_queue %v %v", v, ok)
	}
}

// A KV-transfer span that arrives before its legs waits for them, and
// then times the transfer.
func TestKVSpanFirst(t *testing.T) {
	l := NewBook(0)
	l.Add(Batch{KV: []KVSpan{{TraceID: "t1", Start: at(0.35), End: at(0.45)}}})
	if recs := l.Records(); len(recs) != 0 {
		t.Fatalf("a KV span alone makes records %+v", recs)
	}
	p, d := legs("t1", "r1", 0)
	l.Add(Batch{Legs: []Leg{d, p}})
	recs := l.Records()
	if len(recs) != 1 {
		t.Fatalf("records %+v", recs)
	}
	if v, ok := recs[0].Phase(PhaseKVTransfer); !ok || !near(v, 0.1) || recs[0].Waterfall[2].Inferred {
		t.Errorf("kv %v %v: %+v", v, ok, recs[0].Waterfall)
	}
}

func TestBookBound(t *testing.T) {
	l := NewBook(4)
	for i, id := range []string{"a", "b", "c"} {
		p, d := legs("t"+id, id, float64(i))
		l.Add(Batch{Legs: []Leg{p, d}})
	}
	recs := l.Records()
	if len(recs) != 2 || recs[0].ID != "b" || recs[1].ID != "c" || l.Stats().Dropped != 1 {
		t.Fatalf("records %v, stats %+v", recs, l.Stats())
	}
	// A late leg of the dropped request starts a new one instead of
	// joining what is gone.
	_, d := legs("ta", "a", 0)
	l.Add(Batch{Legs: []Leg{d}})
	if recs := l.Records(); recs[len(recs)-1].Legs != "decode" {
		t.Errorf("late leg: %+v", recs[len(recs)-1])
	}
}

func TestSelect(t *testing.T) {
	var recs []Record
	for i, id := range []string{"a", "b", "c", "d"} {
		p, d := legs("t"+id, id, float64(i))
		d.Decode = float64(4 - i) // a is slowest
		d.E2E = d.TTFT + d.Decode
		if id == "c" {
			d.Instance = "d1"
		}
		recs = append(recs, join(&p, &d, nil))
	}
	ids := func(pg Page) (s string) {
		for _, r := range pg.Records {
			s += r.ID
		}
		return s
	}
	f := func(q Query, want string, total int) {
		t.Helper()
		pg := Select(append([]Record(nil), recs...), q)
		if ids(pg) != want || pg.Total != total {
			t.Errorf("%+v: %s (%d), want %s (%d)", q, ids(pg), pg.Total, want, total)
		}
	}
	f(Query{}, "abcd", 4)
	f(Query{Sort: SortNewest}, "dcba", 4)
	f(Query{Limit: 2, Offset: 1}, "bc", 4)
	f(Query{Offset: 9}, "", 4)
	f(Query{Instance: "d1"}, "c", 1)
	f(Query{Phase: PhaseDecode, Min: 2.5}, "ab", 2)
	f(Query{Pool: "other"}, "", 0)
	if got := InFlight(recs, at(1.2)); len(got) != 2 { // a runs to 5.53, b from 1.0
		t.Errorf("in flight at 1.2 s: %d", len(got))
	}
}

// Records filed already joined count against the span bound like legs:
// past it the oldest go.
func TestAddRecordsBounded(t *testing.T) {
	l := NewBook(10)
	for i := range 8 {
		l.AddRecords([]Record{{ID: string(rune('a' + i)), TTFT: -1, E2E: -1}}, 2)
	}
	var ids string
	l.Scan(func(r *Record) { ids += r.ID })
	if ids != "defgh" {
		t.Errorf("kept %q, want the newest five", ids)
	}
	if st := l.Stats(); st.Records != 8 || st.Dropped != 3 {
		t.Errorf("stats %+v", st)
	}
	if n := len(l.Records()); n != 5 {
		t.Errorf("Records: %d", n)
	}
}
