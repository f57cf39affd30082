package engine

import (
	"os"
	"testing"
)

// The cache holds the series ptdmon reads, not every series of the
// exposition, and targets exporting the same series share their meaning.
func TestCacheHoldsWantedSeriesShared(t *testing.T) {
	body, err := os.ReadFile("testdata/vllm_dp4_1504.txt")
	if err != nil {
		t.Fatal(err)
	}
	a, b := NewReader(EngineAuto, Prefill, KVAuto), NewReader(EngineAuto, Prefill, KVAuto)
	var first *Observation
	for i := range 3 {
		oa, err := a.Read(body, "")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = &Observation{}
			*first = *oa
			first.Counters = append([]CounterValue(nil), oa.Counters...)
		} else if len(oa.Counters) != len(first.Counters) || oa.Samples != first.Samples {
			t.Fatalf("read %d: %d counters, %d samples; first read %d, %d", i, len(oa.Counters), oa.Samples, len(first.Counters), first.Samples)
		}
		a.Evict(4)
		if _, err := b.Read(body, ""); err != nil {
			t.Fatal(err)
		}
	}
	if first.Samples != 1504 {
		t.Errorf("%d samples, want 1504", first.Samples)
	}
	if n := a.Cached(); n == 0 || n >= 1000 {
		t.Errorf("%d series cached of 1504: want only the families an adapter reads", n)
	}
	shared := 0
	for k, e := range a.cache {
		if f, ok := b.cache[k]; ok && f.meaning == e.meaning {
			shared++
		}
	}
	if shared != a.Cached() {
		t.Errorf("%d of %d series share their meaning between two targets", shared, a.Cached())
	}
}
