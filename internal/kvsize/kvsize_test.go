package kvsize

import (
	"path/filepath"
	"strings"
	"testing"
)

// Every expected number below is copied from docs/kvbytes.md#reference-figures
// (main table, tensor parallelism, third-party figures); none was taken from this
// package's output.

func load(t *testing.T, model string, opts Options) Result {
	t.Helper()
	r, err := FromFile(filepath.Join("testdata", model, "config.json"), opts)
	if err != nil {
		t.Fatalf("%s %+v: %v", model, opts, err)
	}
	return r
}

// TestMainTable checks per-token bytes and B_request in bf16 (auto) at S=8192
// and S=16384, in window ("W") and full ("F") mode, against docs/kvbytes.md#main-table.
func TestMainTable(t *testing.T) {
	f := func(model string, perToken, w8k, f8k, w16k, f16k int64) {
		t.Helper()
		cases := []struct {
			s    int
			mode string
			want int64
		}{
			{8192, WindowModeWindow, w8k}, {8192, WindowModeFull, f8k},
			{16384, WindowModeWindow, w16k}, {16384, WindowModeFull, f16k},
		}
		for _, c := range cases {
			r := load(t, model, Options{SeqLen: c.s, WindowMode: c.mode})
			if r.PerTokenBytes != perToken {
				t.Errorf("%s S=%d %s: per-token %d, want %d", model, c.s, c.mode, r.PerTokenBytes, perToken)
			}
			if r.BytesPerRequest != c.want {
				t.Errorf("%s S=%d %s: B_request %d, want %d", model, c.s, c.mode, r.BytesPerRequest, c.want)
			}
			if r.ElementBytes != 2 {
				t.Errorf("%s: element bytes %d, want 2 (bf16)", model, r.ElementBytes)
			}
			// TP 1: the wire sees exactly the logical size.
			if r.WireBytesPerRequest != c.want || r.TPWireFactor != 1 {
				t.Errorf("%s: TP1 wire %d factor %v, want %d and 1", model, r.WireBytesPerRequest, r.TPWireFactor, c.want)
			}
		}
	}
	// Models without windowed layers: W = F.
	same := func(model string, perToken, b8k, b16k int64) {
		t.Helper()
		f(model, perToken, b8k, b8k, b16k, b16k)
	}
	same("llama-3.1-8b", 131_072, 1_073_741_824, 2_147_483_648)
	same("llama-3.1-70b", 327_680, 2_684_354_560, 5_368_709_120)
	same("qwen2.5-7b", 57_344, 469_762_048, 939_524_096)
	same("qwen2.5-72b", 327_680, 2_684_354_560, 5_368_709_120)
	same("qwen3-32b", 262_144, 2_147_483_648, 4_294_967_296)
	same("qwen3-30b-a3b", 98_304, 805_306_368, 1_610_612_736)
	same("mixtral-8x7b-v0.1", 131_072, 1_073_741_824, 2_147_483_648)
	same("glm-4.5", 376_832, 3_087_007_744, 6_174_015_488)
	same("deepseek-v3", 70_272, 575_668_224, 1_151_336_448)
	same("kimi-k2-instruct", 70_272, 575_668_224, 1_151_336_448)
	same("deepseek-v2-lite", 31_104, 254_803_968, 509_607_936)
	same("deepseek-v3.2", 78_324, 641_630_208, 1_283_260_416)
	// Qwen3-Next: attention × S plus the bf16 Gated-DeltaNet state (39,518,208 B).
	same("qwen3-next-80b-a3b", 24_576, 240_844_800, 442_171_392)

	f("mistral-7b-v0.1", 131_072, 536_870_912, 1_073_741_824, 536_870_912, 2_147_483_648)
	f("gemma-2-9b", 344_064, 2_113_929_216, 2_818_572_288, 3_523_215_360, 5_637_144_576)
	f("gemma-3-27b", 507_904, 1_107_296_256, 4_160_749_568, 1_778_384_896, 8_321_499_136)
	f("gemma-3-4b", 139_264, 289_406_976, 1_140_850_688, 457_179_136, 2_281_701_376)
	f("gpt-oss-120b", 73_728, 306_708_480, 603_979_776, 608_698_368, 1_207_959_552)
	f("gpt-oss-20b", 49_152, 204_472_320, 402_653_184, 405_798_912, 805_306_368)
	f("llama-4-scout", 196_608, 1_610_612_736, 1_610_612_736, 2_013_265_920, 3_221_225_472)
}

// TestFP8 applies the main table's "FP8 KV halves every figure", with the two
// documented exceptions: DeepSeek-V3.2 (R5: fp8_ds_mla latent 656 B + indexer
// 132 B per layer = 48,068 B/token) and the Qwen3-Next linear state, whose
// dtype is a separate knob from the KV dtype (R10).
func TestFP8(t *testing.T) {
	f := func(model string, mode string, s int, bf16 int64) {
		t.Helper()
		for _, dt := range []string{"fp8", "fp8_e4m3", "fp8_e5m2"} {
			r := load(t, model, Options{SeqLen: s, KVDtype: dt, WindowMode: mode})
			if r.BytesPerRequest != bf16/2 {
				t.Errorf("%s %s S=%d %s: B_request %d, want %d", model, dt, s, mode, r.BytesPerRequest, bf16/2)
			}
			if r.ElementBytes != 1 {
				t.Errorf("%s %s: element bytes %d, want 1", model, dt, r.ElementBytes)
			}
		}
	}
	f("llama-3.1-70b", "", 8192, 2_684_354_560)
	f("llama-3.1-70b", "", 16384, 5_368_709_120)
	f("qwen3-32b", "", 8192, 2_147_483_648)
	f("deepseek-v3", "", 8192, 575_668_224)
	f("deepseek-v2-lite", "", 16384, 509_607_936)
	f("gemma-3-27b", WindowModeWindow, 8192, 1_107_296_256)
	f("gemma-3-27b", WindowModeFull, 16384, 8_321_499_136)
	f("gpt-oss-120b", WindowModeWindow, 16384, 608_698_368)
	f("llama-4-scout", WindowModeWindow, 16384, 2_013_265_920)
	f("mistral-7b-v0.1", WindowModeWindow, 8192, 536_870_912)

	for _, s := range []int{8192, 16384} {
		r := load(t, "deepseek-v3.2", Options{SeqLen: s, KVDtype: "fp8"})
		if r.PerTokenBytes != 48_068 || r.BytesPerRequest != 48_068*int64(s) {
			t.Errorf("deepseek-v3.2 fp8 S=%d: per-token %d B_request %d, want 48,068 and %d", s, r.PerTokenBytes, r.BytesPerRequest, 48_068*int64(s))
		}
		r = load(t, "qwen3-next-80b-a3b", Options{SeqLen: s, KVDtype: "fp8"})
		attn := int64(24_576) * int64(s) / 2
		if r.PerTokenBytes != 24_576/2 || r.StateBytesPerRequest != 39_518_208 || r.BytesPerRequest != attn+39_518_208 {
			t.Errorf("qwen3-next fp8 S=%d: per-token %d state %d B_request %d, want %d, 39,518,208, %d", s, r.PerTokenBytes, r.StateBytesPerRequest, r.BytesPerRequest, 24_576/2, attn+39_518_208)
		}
	}
}

// TestQwen3NextState checks the main table's linear-layer state: 36 layers × 1,097,728 B
// (bf16) or × 2,146,304 B (fp32 recurrent state).
func TestQwen3NextState(t *testing.T) {
	r := load(t, "qwen3-next-80b-a3b", Options{SeqLen: 8192})
	if r.StateBytesPerRequest != 39_518_208 {
		t.Errorf("state %d, want 39,518,208", r.StateBytesPerRequest)
	}
	var linear, full int
	for _, l := range r.Layers {
		switch l.Type {
		case LayerLinear:
			linear++
			if l.StateBytes != 1_097_728 || l.TokensHeld != 0 {
				t.Errorf("linear layer %d: state %d tokens %d, want 1,097,728 and 0", l.Index, l.StateBytes, l.TokensHeld)
			}
		case LayerFull:
			full++
		}
	}
	if linear != 36 || full != 12 {
		t.Errorf("layers: %d linear + %d full, want 36 + 12", linear, full)
	}
	f := func(s int, want int64) {
		t.Helper()
		r := load(t, "qwen3-next-80b-a3b", Options{SeqLen: s, SSMDtype: "fp32"})
		if r.BytesPerRequest != want {
			t.Errorf("fp32 SSM S=%d: %d, want %d", s, r.BytesPerRequest, want)
		}
		if r.Layers[0].StateBytes != 2_146_304 {
			t.Errorf("fp32 SSM layer state %d, want 2,146,304", r.Layers[0].StateBytes)
		}
	}
	f(8192, 278_593_536)
	f(16384, 479_920_128)
}

// TestTP checks docs/kvbytes.md#tensor-parallelism: aggregate bytes per token that an all-ranks
// counter sees, R, and G4's per-rank figure.
func TestTP(t *testing.T) {
	const S = 8192
	f := func(model string, tp int, dp bool, wantR int64, wireAttnPerToken, state int64) {
		t.Helper()
		r := load(t, model, Options{SeqLen: S, TP: tp, DPAttention: dp})
		if r.TP.Replication != wantR {
			t.Errorf("%s TP%d dp=%v: R %d, want %d", model, tp, dp, r.TP.Replication, wantR)
		}
		want := wireAttnPerToken*S + state
		if r.WireBytesPerRequest != want {
			t.Errorf("%s TP%d dp=%v: wire %d, want %d", model, tp, dp, r.WireBytesPerRequest, want)
		}
		if got := float64(want) / float64(r.BytesPerRequest); r.TPWireFactor != got {
			t.Errorf("%s TP%d: factor %v, want %v", model, tp, r.TPWireFactor, got)
		}
	}
	f("llama-3.1-70b", 8, false, 1, 327_680, 0)
	f("qwen3-30b-a3b", 8, false, 2, 196_608, 0)
	f("qwen2.5-7b", 8, false, 2, 114_688, 0)
	f("glm-4.5", 16, false, 2, 753_664, 0)
	f("qwen3-next-80b-a3b", 4, false, 2, 49_152, 39_518_208) // state sharded, R=1
	f("deepseek-v3", 8, false, 8, 562_176, 0)
	f("kimi-k2-instruct", 8, false, 8, 562_176, 0)
	f("deepseek-v3", 8, true, 1, 70_272, 0)

	// G4: Llama-70B, 16K prompt, one GPU out of eight holds 640 MiB.
	r := load(t, "llama-3.1-70b", Options{SeqLen: 16384, TP: 8})
	if r.PerRankBytesPerRequest != 671_088_640 {
		t.Errorf("G4: per rank %d, want 671,088,640", r.PerRankBytesPerRequest)
	}
	if r.TP.KVHeadsPerRank != 1 {
		t.Errorf("G4: %d KV heads per rank, want 1", r.TP.KVHeadsPerRank)
	}
	// Tensor-parallelism table: 40,960 B per token per rank.
	if r.PerRankBytesPerRequest != 40_960*16384 {
		t.Errorf("per rank %d, want 40,960 × 16384", r.PerRankBytesPerRequest)
	}
	// TP 0 and 1 both mean no TP.
	for _, tp := range []int{0, 1} {
		if r := load(t, "qwen3-30b-a3b", Options{SeqLen: S, TP: tp}); r.TPWireFactor != 1 || r.TP.Size != 1 {
			t.Errorf("tp=%d: factor %v size %d, want 1 and 1", tp, r.TPWireFactor, r.TP.Size)
		}
	}
}

// TestMTP checks the main table's note (docs/kvbytes.md#main-table): MTP layers count only with speculative decoding.
func TestMTP(t *testing.T) {
	f := func(model string, without, with int64) {
		t.Helper()
		if r := load(t, model, Options{SeqLen: 8192}); r.PerTokenBytes != without {
			t.Errorf("%s: per-token %d without MTP, want %d", model, r.PerTokenBytes, without)
		}
		if r := load(t, model, Options{SeqLen: 8192, MTP: true}); r.PerTokenBytes != with {
			t.Errorf("%s: per-token %d with MTP, want %d", model, r.PerTokenBytes, with)
		}
	}
	f("deepseek-v3", 70_272, 71_424)
	f("glm-4.5", 376_832, 380_928)
}

// TestGroundTruth holds out the third-party figures of
// docs/kvbytes.md#third-party-figures (tags G1–G13).
func TestGroundTruth(t *testing.T) {
	// G3: DeepSeek V3.x at 128k tokens.
	if r := load(t, "deepseek-v3", Options{SeqLen: 131_072}); r.BytesPerRequest != 9_210_691_584 {
		t.Errorf("G3: %d, want 9,210,691,584", r.BytesPerRequest)
	}
	// G5: Llama-4-Scout, 100k-token prefill, chunk-aware transfer is 31.14% of full.
	w := load(t, "llama-4-scout", Options{SeqLen: 100_000})
	fl := load(t, "llama-4-scout", Options{SeqLen: 100_000, WindowMode: WindowModeFull})
	if ratio := float64(w.BytesPerRequest) / float64(fl.BytesPerRequest); ratio < 0.31139 || ratio > 0.31149 {
		t.Errorf("G5: W/F = %.5f, want 0.31144", ratio)
	}
	// G6: Gemma-3-27B has 52 sliding and 10 full layers; Llama 4 is 3 local : 1 full.
	countTypes := func(r Result) map[string]int {
		m := map[string]int{}
		for _, l := range r.Layers {
			m[l.Type]++
		}
		return m
	}
	if m := countTypes(load(t, "gemma-3-27b", Options{SeqLen: 8192})); m[LayerSliding] != 52 || m[LayerFull] != 10 {
		t.Errorf("G6: gemma-3-27b %v, want 52 sliding + 10 full", m)
	}
	if m := countTypes(load(t, "llama-4-scout", Options{SeqLen: 8192})); m[LayerChunked] != 36 || m[LayerFull] != 12 {
		t.Errorf("G6: llama-4-scout %v, want 36 chunked + 12 full", m)
	}
	if m := countTypes(load(t, "gemma-3-4b", Options{SeqLen: 8192})); m[LayerSliding] != 29 || m[LayerFull] != 5 {
		t.Errorf("gemma-3-4b %v, want 29 sliding + 5 full", m)
	}
	if m := countTypes(load(t, "gemma-2-9b", Options{SeqLen: 8192})); m[LayerSliding] != 21 || m[LayerFull] != 21 {
		t.Errorf("gemma-2-9b %v, want 21 sliding + 21 full", m)
	}
	// G2: Llama-3-8B is 128 KiB per token.
	if r := load(t, "llama-3.1-8b", Options{SeqLen: 1}); r.BytesPerRequest != 128*1024 {
		t.Errorf("G2: %d, want 128 KiB", r.BytesPerRequest)
	}
	// G13 negative control: Llama-70B at 4K is 1.25 GiB, not the published 5 GB.
	r := load(t, "llama-3.1-70b", Options{SeqLen: 4096})
	if r.BytesPerRequest == 5_000_000_000 || r.BytesPerRequest == 5<<30 || r.BytesPerRequest != 1_342_177_280 {
		t.Errorf("G13: %d, want 1.25 GiB = 1,342,177,280", r.BytesPerRequest)
	}
}

// TestTraps asserts the naive-formula values of
// docs/kvbytes.md#naive-formula-traps are never produced.
func TestTraps(t *testing.T) {
	f := func(model string, mode string, naive ...int64) {
		t.Helper()
		r := load(t, model, Options{SeqLen: 8192, WindowMode: mode})
		for _, n := range naive {
			if r.PerTokenBytes == n {
				t.Errorf("%s: per-token %d is the naive trap value", model, n)
			}
		}
	}
	f("deepseek-v3", "", 1_748_992, 4_997_120)
	f("kimi-k2-instruct", "", 1_748_992)
	f("deepseek-v2-lite", "", 221_184)
	f("qwen3-32b", "", 163_840)
	f("qwen3-30b-a3b", "", 49_152)
	f("gemma-2-9b", WindowModeFull, 301_056)
	f("gemma-3-27b", WindowModeFull, 666_624)
	f("gpt-oss-120b", WindowModeFull, 51_840)
	f("qwen3-next-80b-a3b", "", 49_152)

	if r := load(t, "qwen3-next-80b-a3b", Options{SeqLen: 8192}); r.StateBytesPerRequest == 0 {
		t.Error("qwen3-next: no linear state; the naive formula forgets it")
	}
	// Qwen2.5-7B's sliding_window 131072 is not real SWA (use_sliding_window false).
	r := load(t, "qwen2.5-7b", Options{SeqLen: 200_000})
	for _, l := range r.Layers {
		if l.Type != LayerFull || l.TokensHeld != 200_000 {
			t.Fatalf("qwen2.5-7b layer %d: %s holding %d tokens, want full_attention holding all", l.Index, l.Type, l.TokensHeld)
		}
	}
	// Gemma-3-27B in window mode: 1,107,296,256 B, never the naive 666,624 × 8192.
	if r := load(t, "gemma-3-27b", Options{SeqLen: 8192}); r.BytesPerRequest == 666_624*8192 {
		t.Error("gemma-3-27b: naive full-size value")
	}
}

// TestAudit checks that the choices are reported: rules applied and class
// defaults named (R2), warnings for out-of-range S (R14).
func TestAudit(t *testing.T) {
	has := func(list []string, sub string) bool {
		for _, s := range list {
			if strings.Contains(s, sub) {
				return true
			}
		}
		return false
	}
	r := load(t, "gemma-3-4b", Options{SeqLen: 8192})
	for _, want := range []string{"num_key_value_heads absent → 4", "head_dim absent → 256", "sliding_window_pattern absent → 6"} {
		if !has(r.Defaults, want) {
			t.Errorf("gemma-3-4b defaults %q lack %q", r.Defaults, want)
		}
	}
	if r.Inputs.ConfigSection != "text_config" || r.Inputs.ModelType != "gemma3" {
		t.Errorf("gemma-3-4b inputs %+v", r.Inputs)
	}
	r = load(t, "deepseek-v3", Options{SeqLen: 8192})
	if !has(r.Rules, "MLA") || !has(r.Rules, "no ×2") || !has(r.Rules, "MTP layer(s) excluded") {
		t.Errorf("deepseek-v3 rules %q", r.Rules)
	}
	if len(r.Defaults) != 0 {
		t.Errorf("deepseek-v3 used defaults %q, want none", r.Defaults)
	}
	r = load(t, "qwen3-32b", Options{SeqLen: 8192})
	if !has(r.Rules, "head_dim=128") || !has(r.Rules, "would give 80") {
		t.Errorf("qwen3-32b rules should say head_dim 128 is used instead of 80: %q", r.Rules)
	}
	r = load(t, "gpt-oss-120b", Options{SeqLen: 8192})
	if !has(r.Defaults, "no torch_dtype/dtype") {
		t.Errorf("gpt-oss defaults %q should name the dtype default", r.Defaults)
	}
	r = load(t, "llama-3.1-8b", Options{SeqLen: 8192})
	if len(r.Defaults) != 0 || !has(r.Rules, "head_dim absent → hidden_size/num_attention_heads") {
		t.Errorf("llama rules %q defaults %q", r.Rules, r.Defaults)
	}
	// R14: Gemma-2's max_position_embeddings is 8192.
	if r := load(t, "gemma-2-9b", Options{SeqLen: 16384}); !has(r.Warnings, "max_position_embeddings") {
		t.Errorf("gemma-2-9b S=16384: warnings %q should flag max_position_embeddings", r.Warnings)
	}
	if r := load(t, "gemma-2-9b", Options{SeqLen: 8192}); len(r.Warnings) != 0 {
		t.Errorf("gemma-2-9b S=8192: unexpected warnings %q", r.Warnings)
	}
	// Grouping: gpt-oss is 18 sliding + 18 full, in that order.
	g := load(t, "gpt-oss-120b", Options{SeqLen: 8192}).Groups
	if len(g) != 2 || g[0].Count != 18 || g[0].Type != LayerSliding || g[0].TokensHeld != 128 || g[1].Count != 18 || g[1].TokensHeld != 8192 {
		t.Errorf("gpt-oss groups %+v", g)
	}
}
