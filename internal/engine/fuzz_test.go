package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead feeds arbitrary bodies through the parser and both adapters: a
// scrape of garbage must end in an error or an observation, never a panic.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	fixtures, _ := filepath.Glob("testdata/reports/*.txt")
	for _, p := range append(files, fixtures...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, "")
		}
	}
	f.Add([]byte("# TYPE vllm:x counter\nvllm:x_total{engine=\"0\"} NaN\n"), "text/plain")
	f.Add([]byte("# TYPE a counter\na_total 1\n# EOF\n"), "application/openmetrics-text; version=1.0.0")
	f.Add([]byte("sglang:kv_transfer_total_mb_sum{tp_rank=\"99999999999\"} -1\n"), "")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		for _, role := range []Role{RoleUnknown, Prefill} {
			r := NewReader(EngineAuto, role, KVAuto)
			r.Explain()
			o, err := r.Read(body, contentType)
			if err == nil && o == nil {
				t.Fatal("nil observation without an error")
			}
			if err == nil {
				for _, c := range o.Counters {
					if c.Value < 0 {
						t.Fatalf("negative counter value %v for %s", c.Value, c.Metric)
					}
				}
			}
			// A second read of the same body through the warm cache must agree.
			o2, err2 := r.Read(body, contentType)
			if (err == nil) != (err2 == nil) {
				t.Fatalf("cached read disagrees: %v vs %v", err, err2)
			}
			_ = o2
		}
	})
}
