package kvsize

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestErrors(t *testing.T) {
	ok := Options{SeqLen: 8192}
	llama, err := os.ReadFile(filepath.Join("testdata", "llama-3.1-8b", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	f := func(name, config string, opts Options, wants ...string) {
		t.Helper()
		r, err := FromConfigJSON([]byte(config), opts)
		if err == nil {
			t.Errorf("%s: no error, result %d bytes", name, r.BytesPerRequest)
			return
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v is not ErrInvalid", name, err)
		}
		if r.BytesPerRequest != 0 {
			t.Errorf("%s: error with a non-zero result", name)
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", name, err, w)
			}
		}
	}
	f("not JSON", `{"model_type": "llama",`, ok, "kvsize: config.json: not JSON")
	f("not JSON text", `hello`, ok, "not JSON")
	f("trailing data", `{} {}`, ok, "not JSON")
	f("not an object", `[1, 2]`, ok, "not a JSON object")
	f("no attention fields", `{"model_type": "foo", "num_hidden_layers": 4, "hidden_size": 512}`, ok,
		`kvsize: config.json: no num_attention_heads/num_key_value_heads/head_dim and no known defaults for model_type "foo"`)
	f("no layers", `{"model_type": "llama", "num_attention_heads": 8}`, ok, "num_hidden_layers: missing")
	f("zero layers", `{"model_type": "llama", "num_hidden_layers": 0, "num_attention_heads": 8, "hidden_size": 512}`, ok, "num_hidden_layers")
	f("kv not a number", `{"num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": "8", "hidden_size": 512}`, ok,
		`num_key_value_heads: want an integer, got "8"`)
	f("fractional heads", `{"num_hidden_layers": 2, "num_attention_heads": 8.5, "hidden_size": 512}`, ok, "num_attention_heads: want an integer")
	f("negative head_dim", `{"num_hidden_layers": 2, "num_attention_heads": 8, "head_dim": -1}`, ok, "head_dim: want a non-negative integer")
	f("zero kv", `{"num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 0, "head_dim": 64}`, ok, "num_key_value_heads: must be > 0")
	f("head_dim underivable", `{"num_hidden_layers": 2, "num_attention_heads": 96, "hidden_size": 5120}`, ok,
		"head_dim: missing, and hidden_size 5120 is not divisible by num_attention_heads 96")
	f("unknown dtype", string(llama), Options{SeqLen: 8192, KVDtype: "int4"}, `kv_dtype: unknown "int4"`)
	f("unknown model dtype", `{"torch_dtype": "int8", "num_hidden_layers": 2, "num_attention_heads": 8, "hidden_size": 512}`, ok,
		`torch_dtype: unknown model dtype "int8"`)
	f("S zero", string(llama), Options{SeqLen: 0}, "seq_len: must be > 0, got 0")
	f("S negative", string(llama), Options{SeqLen: -8192}, "seq_len: must be > 0")
	f("bad window mode", string(llama), Options{SeqLen: 8192, WindowMode: "sliding"}, "window_mode")
	f("bad ssm dtype", string(llama), Options{SeqLen: 8192, SSMDtype: "fp4"}, "ssm_dtype")
	f("negative tp", string(llama), Options{SeqLen: 8192, TP: -2}, "tp: must be >= 0")
	f("tp indivisible", string(llama), Options{SeqLen: 8192, TP: 3}, "tp: attention TP 3 and num_key_value_heads 8")
	f("MLA without rope", `{"model_type": "deepseek_v3", "num_hidden_layers": 2, "kv_lora_rank": 512}`, ok, "qk_rope_head_dim: missing")
	f("DSA without index_head_dim", `{"model_type": "deepseek_v32", "num_hidden_layers": 2, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "index_topk": 2048}`, ok, "index_head_dim")
	f("layer_types length", `{"model_type": "gpt_oss", "num_hidden_layers": 3, "num_attention_heads": 8, "head_dim": 64, "sliding_window": 128,
		"layer_types": ["sliding_attention", "full_attention"]}`, ok, "layer_types: has 2 entries, but there are 3 layers")
	f("layer_types unknown", `{"num_hidden_layers": 1, "num_attention_heads": 8, "head_dim": 64, "layer_types": ["cross_attention"]}`, ok,
		`layer_types[0]: unknown layer type "cross_attention"`)
	f("sliding without window", `{"model_type": "gemma2", "num_hidden_layers": 2, "num_attention_heads": 8, "head_dim": 64}`, ok, "sliding_window: missing")
	f("linear without fields", `{"model_type": "qwen3_next", "num_hidden_layers": 4, "full_attention_interval": 4, "num_attention_heads": 16,
		"num_key_value_heads": 2, "head_dim": 256}`, ok, "linear_num_key_heads: missing")
	f("nested not an object", `{"text_config": 3}`, ok, "text_config: want an object")
	f("nested field named", `{"model_type": "llama4", "text_config": {"num_hidden_layers": 2, "num_attention_heads": "x"}}`, ok,
		"text_config.num_attention_heads")
	f("overflow", `{"num_hidden_layers": 60000, "num_key_value_heads": 1000000000, "head_dim": 1000000000}`, ok, "overflow")

	// FromFile names the file, for bad content and for a missing file.
	dir := t.TempDir()
	bad := filepath.Join(dir, "config.json")
	if err := os.WriteFile(bad, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FromFile(bad, ok); err == nil || !strings.Contains(err.Error(), bad) || !errors.Is(err, ErrInvalid) {
		t.Errorf("FromFile(bad json): %v should name %s and be ErrInvalid", err, bad)
	}
	missing := filepath.Join(dir, "nope.json")
	if _, err := FromFile(missing, ok); err == nil || !strings.Contains(err.Error(), missing) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("FromFile(missing): %v should name %s and be fs.ErrNotExist", err, missing)
	}
}

// TestDefaultsAndVariants covers class defaults and layer rules that no
// testdata model exercises.
func TestDefaultsAndVariants(t *testing.T) {
	f := func(name, config string, opts Options, want int64) Result {
		t.Helper()
		r, err := FromConfigJSON([]byte(config), opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.BytesPerRequest != want {
			t.Errorf("%s: %d, want %d", name, r.BytesPerRequest, want)
		}
		return r
	}
	// R2: mistral without a sliding_window key defaults to 4096 (Mistral-7B-v0.1
	// shape, main table: W = 512 MiB); null means no window (F = 1 GiB at 8192).
	shape := `"model_type": "mistral", "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096`
	r := f("mistral absent", `{`+shape+`}`, Options{SeqLen: 8192}, 536_870_912)
	if !strings.Contains(strings.Join(r.Defaults, "|"), "mistral: sliding_window absent → 4096") {
		t.Errorf("mistral absent: defaults %q", r.Defaults)
	}
	f("mistral null", `{`+shape+`, "sliding_window": null}`, Options{SeqLen: 8192}, 1_073_741_824)
	// R2 generic: no num_key_value_heads means MHA. Llama-2-7B shape: G11's 524,288 B/token.
	r = f("MHA default", `{"model_type": "llama", "num_hidden_layers": 32, "num_attention_heads": 32, "hidden_size": 4096}`, Options{SeqLen: 1}, 524_288)
	if !strings.Contains(strings.Join(r.Defaults, "|"), "num_key_value_heads absent → num_attention_heads=32 (MHA)") {
		t.Errorf("MHA default: defaults %q", r.Defaults)
	}
	// transformers v5 writes "dtype" instead of "torch_dtype" (R1); fp32 runs in 16 bit (R10).
	r = f("dtype key", `{"dtype": "float32", "num_hidden_layers": 32, "num_attention_heads": 32, "hidden_size": 4096}`, Options{SeqLen: 1}, 524_288)
	if r.ElementBytes != 2 {
		t.Errorf("dtype float32: element bytes %d, want 2", r.ElementBytes)
	}
	// Non-MLA v_head_dim: kv × (head_dim + v_head_dim) (R3).
	f("v_head_dim", `{"num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 192, "v_head_dim": 128}`,
		Options{SeqLen: 1}, 2*(192+128)*2)
	// llm_config nesting (R1), and layer_types with explicit chunked layers.
	f("llm_config", `{"model_type": "internvl_chat", "llm_config": {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096}}`,
		Options{SeqLen: 8192}, 1_073_741_824)
	f("language_config", `{"language_config": {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096}}`,
		Options{SeqLen: 8192}, 1_073_741_824)
	// Llama-4 with explicit no_rope_layers: same 12 global + 36 local as the default (main table W at 16384).
	nr := strings.Repeat("1, 1, 1, 0, ", 12)
	f("no_rope_layers", `{"model_type": "llama4", "text_config": {"model_type": "llama4_text", "num_hidden_layers": 48, "num_attention_heads": 40,
		"num_key_value_heads": 8, "head_dim": 128, "no_rope_layers": [`+nr[:len(nr)-2]+`]}}`, Options{SeqLen: 16384}, 2_013_265_920)
	// Qwen3-Next with layer_types instead of full_attention_interval gives the same main-table figure.
	lt := strings.Repeat(`"linear_attention", "linear_attention", "linear_attention", "full_attention", `, 12)
	f("qwen3_next layer_types", `{"model_type": "qwen3_next", "num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 2,
		"head_dim": 256, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32,
		"linear_value_head_dim": 128, "torch_dtype": "bfloat16", "layer_types": [`+lt[:len(lt)-2]+`]}`, Options{SeqLen: 8192}, 240_844_800)
	// A class default used by many layers is reported once.
	r = f("gemma3 layer_types default window", `{"model_type": "gemma3_text", "num_hidden_layers": 2, "torch_dtype": "bfloat16",
		"layer_types": ["sliding_attention", "sliding_attention"]}`, Options{SeqLen: 8192}, 2*4*(256+256)*2*4096) // layers × kv × (K+V head_dim) × 2 B × window
	if len(r.Defaults) != 3 {
		t.Errorf("gemma3 defaults %q, want kv, head_dim and sliding_window once each", r.Defaults)
	}
	// Integral floats are integers.
	f("float ints", `{"num_hidden_layers": 32.0, "num_attention_heads": 32, "num_key_value_heads": 8.0, "hidden_size": 4096}`, Options{SeqLen: 8192}, 1_073_741_824)
}
