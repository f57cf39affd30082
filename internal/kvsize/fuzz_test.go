package kvsize

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzFromConfigJSON: no input may panic, and a success is never 0 bytes or
// an inconsistent sum.
func FuzzFromConfigJSON(f *testing.F) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "*", "config.json"))
	for _, d := range dirs {
		data, err := os.ReadFile(d)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, 8192, 1, false, uint8(0))
	}
	f.Add([]byte(`{"num_hidden_layers": 2, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "index_topk": 1, "index_head_dim": 7}`), 16384, 8, true, uint8(3))
	f.Add([]byte(`{"text_config": {"layer_types": ["sliding_attention"], "num_hidden_layers": 1, "head_dim": 1, "num_key_value_heads": 1, "sliding_window": 1}}`), 1, 0, false, uint8(1))
	f.Add([]byte(`null`), -1, -1, false, uint8(9))
	dtypes := []string{"", "auto", "bf16", "fp16", "fp8", "fp8_e4m3", "fp8_e5m2", "bogus"}
	f.Fuzz(func(t *testing.T, data []byte, seqLen, tp int, full bool, dt uint8) {
		opts := Options{SeqLen: seqLen, TP: tp % 1024, KVDtype: dtypes[int(dt)%len(dtypes)], WindowMode: WindowModeWindow}
		if full {
			opts.WindowMode = WindowModeFull
		}
		r, err := FromConfigJSON(data, opts)
		if err != nil {
			return
		}
		if r.BytesPerRequest <= 0 || r.WireBytesPerRequest < r.BytesPerRequest {
			t.Fatalf("success with bytes %d wire %d", r.BytesPerRequest, r.WireBytesPerRequest)
		}
		var sum int64
		for _, l := range r.Layers {
			sum += l.Bytes
		}
		if sum != r.BytesPerRequest {
			t.Fatalf("layers sum %d != B_request %d", sum, r.BytesPerRequest)
		}
	})
}
