package sim

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestPrefixHits: with half the requests hitting half their prompt on
// decode, every transfer still counts one and the bytes moved are each
// transfer's own, B_request or half of it: KV bytes ÷ B_request falls
// below the transfers by the hit share, and the exported byte counters
// agree with the truth. Without hits the simulator moves B_request each,
// as before.
func TestPrefixHits(t *testing.T) {
	f := func(name string, hit PrefixHitSpec, wantShare float64) {
		t.Run(name, func(t *testing.T) {
			sc := baseScenario()
			sc.Groups = sc.Groups[:1] // vLLM, FlagCX
			sc.Groups[0].PrefixHit = hit
			if err := sc.Validate(); err != nil {
				t.Fatal(err)
			}
			m, err := NewModel(sc, 3, time.Unix(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			m.AdvanceTo(120 * time.Second)
			tot := m.TruthAt(120 * time.Second).Totals
			if tot.KVTransfers < 200 {
				t.Fatalf("only %d transfers", tot.KVTransfers)
			}
			B := float64(sc.KVBytesPerRequest)
			// Each transfer moves B or B/2: the count of hits follows from
			// the bytes exactly, and it must be a whole number.
			full := float64(tot.KVBytes) / B
			half := float64(sc.Groups[0].TransferBytes(sc, true)) / B
			hits := (float64(tot.KVTransfers) - full) / (1 - half)
			if hit.Fraction == 0 && tot.KVBytes != tot.KVTransfers*sc.KVBytesPerRequest {
				t.Errorf("no hits: %d bytes over %d transfers, want B_request each", tot.KVBytes, tot.KVTransfers)
			}
			share := hits / float64(tot.KVTransfers)
			// Binomial: 4 standard deviations around the configured fraction.
			sd := math.Sqrt(hit.Fraction * (1 - hit.Fraction) / float64(tot.KVTransfers))
			if math.Abs(share-wantShare) > 4*sd+1e-9 {
				t.Errorf("hit share %.3f of %d transfers, want %.2f ± %.3f", share, tot.KVTransfers, wantShare, 4*sd)
			}
			if perXfer := float64(tot.KVBytes) / float64(tot.KVTransfers) / B; hit.Fraction > 0 && !(perXfer < 0.85) {
				t.Errorf("bytes per transfer %.3f × B_request: want well below it", perXfer)
			}
			// The exported counters say the same (the prefill side counts
			// FlagCX copies).
			var bytes float64
			for _, in := range m.Instances() {
				if in.Role != RolePrefill {
					continue
				}
				body, _, err := m.Exposition(in.Name, nil)
				if err != nil {
					t.Fatal(err)
				}
				v, ok := sumCounter(parseExpo(t, body), "vllm:flagcx_total_bytes_transferred_total", "")
				if !ok {
					t.Fatalf("%s exports no FlagCX bytes:\n%s", in.Name, head(body, 40))
				}
				bytes += v
			}
			if bytes != float64(tot.KVBytes) {
				t.Errorf("exported %g bytes, truth %d", bytes, tot.KVBytes)
			}
		})
	}
	f("none", PrefixHitSpec{}, 0)
	f("half of the requests, half cached", PrefixHitSpec{Fraction: 0.5}, 0.5)
	f("all, a quarter cached", PrefixHitSpec{Fraction: 1, Cached: 0.25}, 1)
}

// TestPrefixHitsLoadModel: the load model's KV capacity is the link over
// the mean transfer, B_request × (1 − fraction × cached).
func TestPrefixHitsLoadModel(t *testing.T) {
	sc := baseScenario()
	g := &sc.Groups[0]
	before := sc.LoadModel().Groups[0].Stage("kv").CapacityPerSec
	g.PrefixHit = PrefixHitSpec{Fraction: 0.5, Cached: 0.5}
	after := sc.LoadModel().Groups[0].Stage("kv").CapacityPerSec
	if math.Abs(after/before-1/0.75) > 1e-9 {
		t.Errorf("KV capacity %g → %g with hits, want ×%g", before, after, 1/0.75)
	}
	for _, bad := range []PrefixHitSpec{{Fraction: -0.1}, {Fraction: 1.5}, {Fraction: 0.5, Cached: 1}, {Fraction: math.NaN()}} {
		g.PrefixHit = bad
		if err := sc.Validate(); err == nil || !strings.Contains(err.Error(), "prefix_hit") {
			t.Errorf("%+v: %v, want a prefix_hit error", bad, err)
		}
	}
}

// TestPrefixHitsInYAML: a scenario file sets a group's prefix hits, and an
// out-of-range value is reported at its line.
func TestPrefixHitsInYAML(t *testing.T) {
	sc, err := ParseScenario("hits.yaml", []byte("groups:\n  - name: v\n    engine: vllm\n    rate: 2\n    prefix_hit: {fraction: 0.5, cached: 0.25}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Groups[0].PrefixHit; got != (PrefixHitSpec{Fraction: 0.5, Cached: 0.25}) {
		t.Errorf("prefix_hit %+v", got)
	}
	_, err = ParseScenario("bad.yaml", []byte("groups:\n  - name: v\n    engine: vllm\n    rate: 2\n    prefix_hit: {fraction: 2}\n"))
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:5") || !strings.Contains(err.Error(), "fraction") {
		t.Errorf("fraction 2: %v, want an error at line 5", err)
	}
}
