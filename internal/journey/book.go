package journey

import (
	"sync"
	"time"
)

// DefaultMaxSpans bounds the spans the book keeps by default.
const DefaultMaxSpans = 100_000

// Book keeps the newest requests' legs, joins each request's legs as
// they come in (in any order) and answers queries. It holds at most
// maxSpans spans: past that the oldest requests are dropped. Safe for
// concurrent use. SGLang's spans waiting to be assembled into a leg are
// bounded by maxSpans as well, apart.
type Book struct {
	mu       sync.Mutex
	maxSpans int
	spans    int
	byTrace  map[string]*entry
	byID     map[string]*entry
	order    []*entry // oldest first; dropped entries are nil until compacted
	head     int
	stats    Stats
	sglang   *sglangAssembler
}

// Stats count what the book was given.
type Stats struct {
	Legs, KVSpans, Ignored, Joined, Dropped int64
	// Records counts records filed already joined (AddRecords).
	Records int64
}

type entry struct {
	prefill, decode *Leg
	kv              *KVSpan
	record          Record
	spans           int
	dropped         bool
	direct          bool // filed already joined: no legs to join
}

// NewBook returns a book of at most maxSpans spans (≤ 0: the default).
func NewBook(maxSpans int) *Book {
	if maxSpans <= 0 {
		maxSpans = DefaultMaxSpans
	}
	return &Book{maxSpans: maxSpans, byTrace: map[string]*entry{}, byID: map[string]*entry{},
		sglang: newSGLangAssembler(maxSpans)}
}

// Add files the legs and KV spans of one export.
func (l *Book) Add(b Batch) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stats.Ignored += int64(b.Ignored)
	if len(b.SGLang) > 0 {
		legs, kvs := l.sglang.add(b.SGLang)
		b.Legs = append(b.Legs[:len(b.Legs):len(b.Legs)], legs...)
		b.KV = append(b.KV[:len(b.KV):len(b.KV)], kvs...)
	}
	for i := range b.Legs {
		lg := b.Legs[i]
		l.stats.Legs++
		e := l.find(&lg)
		if e == nil {
			e = l.newEntry()
		}
		l.place(e, &lg)
		l.index(e, lg.TraceID, lg.RequestID)
		if lg.Room != "" {
			l.byID[roomKey(lg.Room)] = e
		}
		l.refresh(e)
	}
	for i := range b.KV {
		kv := b.KV[i]
		l.stats.KVSpans++
		if kv.TraceID == "" {
			continue
		}
		e := l.byTrace[kv.TraceID]
		if e == nil {
			e = l.newEntry()
			l.index(e, kv.TraceID, "")
		}
		if e.kv == nil {
			e.spans++
			l.spans++
		}
		e.kv = &kv
		l.refresh(e)
	}
	l.evict()
}

// find returns the entry whose other leg this one is: same trace id, else
// same request id, with this leg's side still vacant. One trace may hold
// several requests (an agent's calls, say), and a proxy may give the two
// legs of one request different ids: legs of one trace whose ids differ
// are joined only when their times fit one request (plausible).
func (l *Book) find(lg *Leg) *entry {
	vacant := func(e *entry) bool {
		if e == nil || e.dropped {
			return false
		}
		for _, o := range []*Leg{e.prefill, e.decode} {
			if o != nil && o.RequestID != "" && lg.RequestID != "" && o.RequestID != lg.RequestID && !plausible(o, lg) {
				return false
			}
		}
		if lg.prefillOnly() {
			return e.prefill == nil
		}
		return e.decode == nil || e.prefill == nil
	}
	if e := l.byTrace[lg.TraceID]; lg.TraceID != "" && vacant(e) {
		return e
	}
	if e := l.byID[lg.RequestID]; lg.RequestID != "" && vacant(e) {
		return e
	}
	if e := l.byID[roomKey(lg.Room)]; lg.Room != "" && vacant(e) {
		return e
	}
	return nil
}

// roomKey is where a pairing key is indexed beside the request ids.
func roomKey(room string) string { return "\x00room:" + room }

// legSkew is how far the two engines' clocks may disagree for legs to be
// taken as one request's.
const legSkew = 250 * time.Millisecond

// plausible says whether two legs can be one request's: the proxy sends
// the decode leg once the prefill leg has answered, so the later leg
// arrives after the earlier one ended.
//
// Legs that carry a pairing key (Room) are one request's when the keys
// agree: SGLang's router sends a request to both engines at once, each of
// which may give it its own rid.
func plausible(a, b *Leg) bool {
	if a.Room != "" && b.Room != "" {
		return a.Room == b.Room
	}
	p, d := a, b
	if b.prefillOnly() || !a.prefillOnly() && b.Start.Before(a.Start) {
		p, d = b, a
	}
	return !d.Start.Before(p.End.Add(-legSkew))
}

// earlier says whether a leg began before another: of two legs without
// max_tokens 1, the earlier one is taken for the prefill leg.
func (l *Book) earlier(a, b *Leg) bool { return a.Start.Before(b.Start) }

// place puts lg on its side of e.
func (l *Book) place(e *entry, lg *Leg) {
	switch {
	case lg.prefillOnly():
		e.prefill = lg
	case e.decode == nil:
		e.decode = lg
	default:
		// Two full legs: the earlier is the prefill leg.
		if l.earlier(lg, e.decode) {
			e.prefill = lg
		} else {
			e.prefill, e.decode = e.decode, lg
		}
	}
	e.spans++
	l.spans++
	if e.prefill != nil && e.decode != nil {
		l.stats.Joined++
	}
}

func (l *Book) newEntry() *entry {
	e := &entry{}
	l.order = append(l.order, e)
	return e
}

func (l *Book) index(e *entry, trace, id string) {
	if trace != "" {
		l.byTrace[trace] = e
	}
	if id != "" {
		l.byID[id] = e
	}
}

func (l *Book) refresh(e *entry) {
	e.record = join(e.prefill, e.decode, e.kv)
	if e.record.ID == "" && e.kv != nil {
		e.record.ID, e.record.TraceID = e.kv.TraceID, e.kv.TraceID
	}
}

// evict drops the oldest entries while the book holds too many spans.
func (l *Book) evict() {
	for l.spans > l.maxSpans && l.head < len(l.order) {
		e := l.order[l.head]
		l.order[l.head] = nil
		l.head++
		e.dropped = true
		l.spans -= e.spans
		l.stats.Dropped++
		for _, k := range []*Leg{e.prefill, e.decode} {
			if k == nil {
				continue
			}
			if l.byTrace[k.TraceID] == e {
				delete(l.byTrace, k.TraceID)
			}
			if l.byID[k.RequestID] == e {
				delete(l.byID, k.RequestID)
			}
			if k.Room != "" && l.byID[roomKey(k.Room)] == e {
				delete(l.byID, roomKey(k.Room))
			}
		}
		if e.kv != nil && l.byTrace[e.kv.TraceID] == e {
			delete(l.byTrace, e.kv.TraceID)
		}
	}
	if l.head > len(l.order)/2 && l.head > 1024 {
		l.order = append([]*entry(nil), l.order[l.head:]...)
		l.head = 0
	}
}

// Stats returns the counts so far.
func (l *Book) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// Records returns a copy of every record with at least one leg, oldest
// first (a KV-transfer span alone waits for its legs). Waterfall and
// Absent are shared with the book and must not be changed.
func (l *Book) Records() []Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Record, 0, len(l.order)-l.head)
	for _, e := range l.order[l.head:] {
		if e.prefill != nil || e.decode != nil || e.direct {
			out = append(out, e.record)
		}
	}
	return out
}

// Scan calls fn with every record that Records would return, oldest
// first, under the book's lock and without copying: fn must be quick,
// must not keep r and must not call the book.
func (l *Book) Scan(fn func(r *Record)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.order[l.head:] {
		if e.prefill != nil || e.decode != nil || e.direct {
			fn(&e.record)
		}
	}
}
