package slo

import (
	"fmt"
	"testing"
)

// BenchmarkSumBoundOf: the whole request's bound over the two legs in
// vLLM's TTFT buckets, behind one to three parts of a router's own time
// (llm-d's queue, Dynamo's preprocessing, the gateway's hand-over) in
// their own buckets: the cost of one SLO of one pool on each API read.
func BenchmarkSumBoundOf(b *testing.B) {
	vllmTTFT := []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	eppQueue := []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	dynamoStage := []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5}
	handover := []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}
	spread := func(bounds []float64, scale float64) Hist {
		v := make([]float64, 200)
		for i := range v {
			v[i] = scale * float64(i+1) / 100
		}
		return hist(bounds, v)
	}
	legs := []Hist{spread(vllmTTFT, 0.4), spread(vllmTTFT, 0.05)}
	router := []Hist{spread(eppQueue, 0.1), spread(dynamoStage, 0.01), spread(handover, 0.02)}
	for n := 0; n <= len(router); n++ {
		parts := append(append([]Hist(nil), router[:n]...), legs...)
		b.Run(fmt.Sprintf("parts=%d", len(parts)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := SumBoundOf(parts, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
