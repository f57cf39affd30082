package journey

// SGLang's spans of one leg come from several processes (the API server
// ends the root span, the scheduler the stage slices), each exporting on
// its own, so they arrive in different exports and in any order. The
// assembler keeps them per trace until a root span and the slices its leg
// needs are in, then hands the leg (and the KV-transfer slice, as a
// KV-transfer span) to the book once.

// maxSliceDepth bounds the walk from a slice up to its root: slice, thread
// span, root, with room for a nested slice.
const maxSliceDepth = 4

type sglangTrace struct {
	id    string
	spans map[string]SGLangSpan // by span id
	legs  map[string]bool       // roots whose leg was handed on
	kvs   map[string]bool       // roots whose KV slice was handed on
}

// sglangAssembler holds at most max spans; past that the oldest traces'
// are dropped.
type sglangAssembler struct {
	max, n int
	traces map[string]*sglangTrace
	order  []*sglangTrace // oldest first
}

func newSGLangAssembler(max int) *sglangAssembler {
	return &sglangAssembler{max: max, traces: map[string]*sglangTrace{}}
}

// add files spans and returns the legs and KV-transfer spans they
// completed.
func (a *sglangAssembler) add(spans []SGLangSpan) (legs []Leg, kvs []KVSpan) {
	touched := map[*sglangTrace]bool{}
	for _, sp := range spans {
		tr := a.traces[sp.TraceID]
		if tr == nil {
			tr = &sglangTrace{id: sp.TraceID, spans: map[string]SGLangSpan{}, legs: map[string]bool{}, kvs: map[string]bool{}}
			a.traces[sp.TraceID] = tr
			a.order = append(a.order, tr)
		}
		if _, dup := tr.spans[sp.SpanID]; !dup {
			a.n++
		}
		tr.spans[sp.SpanID] = sp
		touched[tr] = true
	}
	for _, tr := range a.order {
		if touched[tr] {
			l, k := tr.complete()
			legs, kvs = append(legs, l...), append(kvs, k...)
		}
	}
	a.evict()
	return legs, kvs
}

// complete returns the legs and KV spans of tr not yet handed on that its
// spans now make.
func (tr *sglangTrace) complete() (legs []Leg, kvs []KVSpan) {
	slices := map[string]map[string]SGLangSpan{} // root span id → name → slice
	for _, sp := range tr.spans {
		if sp.Root || !sglangSlice(sp.Name) {
			continue
		}
		if root, ok := tr.rootOf(sp); ok {
			if slices[root] == nil {
				slices[root] = map[string]SGLangSpan{}
			}
			slices[root][sp.Name] = sp
		}
	}
	for id, sp := range tr.spans {
		if !sp.Root {
			continue
		}
		if !tr.legs[id] {
			if lg, ok := sglangLeg(sp, slices[id]); ok {
				tr.legs[id] = true
				legs = append(legs, lg)
			}
		}
		if x, ok := slices[id][sglangPrefillTransfer]; ok && !tr.kvs[id] {
			tr.kvs[id] = true
			kvs = append(kvs, KVSpan{TraceID: tr.id, Instance: x.Instance, Start: x.Start, End: x.End})
		}
	}
	return legs, kvs
}

// rootOf walks from a slice up its parents to a root span of the trace.
func (tr *sglangTrace) rootOf(sp SGLangSpan) (string, bool) {
	for range maxSliceDepth {
		p, ok := tr.spans[sp.Parent]
		if !ok {
			return "", false
		}
		if p.Root {
			return p.SpanID, true
		}
		sp = p
	}
	return "", false
}

func (a *sglangAssembler) evict() {
	i := 0
	for ; a.n > a.max && i < len(a.order); i++ {
		tr := a.order[i]
		a.n -= len(tr.spans)
		delete(a.traces, tr.id)
	}
	if i > 0 {
		a.order = append(a.order[:0:0], a.order[i:]...)
	}
}
