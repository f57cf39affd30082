package kvsize

import (
	"fmt"
	"strings"
)

// Families whose layer layout or class defaults are not written in config.json
// and must be known here (R2, R7). Anything else is treated generically.
const (
	famGeneric   = ""
	famGemma2    = "gemma2"
	famGemma3    = "gemma3"
	famGptOss    = "gpt_oss"
	famLlama4    = "llama4"
	famMistral   = "mistral"
	famMixtral   = "mixtral"
	famQwen      = "qwen"
	famQwen3Next = "qwen3_next"
)

var families = map[string]string{
	"gemma2":      famGemma2,
	"gemma3":      famGemma3,
	"gemma3_text": famGemma3,
	"gpt_oss":     famGptOss,
	"llama4":      famLlama4,
	"llama4_text": famLlama4,
	"mistral":     famMistral,
	"mixtral":     famMixtral,
	"qwen2":       famQwen,
	"qwen2_moe":   famQwen,
	"qwen3":       famQwen,
	"qwen3_moe":   famQwen,
	"qwen3_next":  famQwen3Next,
}

// familyOf prefers the top-level model_type (R1) and falls back to the nested
// one, because wrappers such as mistral3 name only themselves at the top.
func familyOf(types ...string) string {
	for _, t := range types {
		if f, ok := families[t]; ok {
			return f
		}
	}
	return famGeneric
}

// Class defaults from transformers that configs rely on by omission (R2).
const (
	gemma3DefaultKV      = 4
	gemma3DefaultHeadDim = 256
	gemma3DefaultWindow  = 4096
	gemma3DefaultPattern = 6
	mistralDefaultWindow = 4096
	llama4DefaultChunk   = 8192
	llama4NoPEInterval   = 4
)

// maxLayers bounds num_hidden_layers so a hostile config cannot make us
// allocate per-layer records without limit; real models have < 200.
const maxLayers = 1 << 16

// plan is one layer's attention type and window (sliding window or chunk).
type plan struct {
	kind   string
	window int64
}

// layerPlans decides each layer's type: layer_types when the config has it,
// otherwise the model family's rule (R7).
func (c *calc) layerPlans(n int) ([]plan, error) {
	lt, ok, err := c.sec.list("layer_types")
	if err != nil {
		return nil, err
	}
	if ok {
		return c.fromLayerTypes(lt, n)
	}
	plans := make([]plan, n)
	for i := range plans {
		plans[i].kind = LayerFull
	}
	setAll := func(kind string, window int64, pick func(i int) bool) {
		for i := range plans {
			if pick(i) {
				plans[i] = plan{kind: kind, window: window}
			}
		}
	}
	switch c.family {
	case famGemma2, famGptOss:
		w, err := c.slidingWindow()
		if err != nil {
			return nil, err
		}
		setAll(LayerSliding, w, func(i int) bool { return i%2 == 0 })
		c.rule("layer types derived for %s: even layer index → sliding_attention(%d), odd → full_attention (R7)", c.modelType, w)
	case famGemma3:
		w, err := c.slidingWindow()
		if err != nil {
			return nil, err
		}
		p, err := c.intOrDefault("sliding_window_pattern", gemma3DefaultPattern, "gemma3_text")
		if err != nil {
			return nil, err
		}
		if p == 0 {
			return nil, invalidf("%s: must be > 0", c.sec.path("sliding_window_pattern"))
		}
		setAll(LayerSliding, w, func(i int) bool { return int64(i+1)%p != 0 })
		c.rule("layer types derived for gemma3: (i+1) %% %d != 0 → sliding_attention(%d), else full_attention (R7)", p, w)
	case famLlama4:
		return c.llama4Plans(plans)
	case famQwen3Next:
		k, ok, err := c.sec.int("full_attention_interval")
		if err != nil {
			return nil, err
		}
		if !ok || k == 0 {
			return nil, invalidf("%s: missing or 0; needed to tell attention from linear layers", c.sec.path("full_attention_interval"))
		}
		setAll(LayerLinear, 0, func(i int) bool { return int64(i+1)%k != 0 })
		c.rule("layer types derived for qwen3_next: (i+1) %% %d == 0 → full_attention, else linear_attention (Gated DeltaNet) (R7)", k)
	case famMistral, famMixtral:
		if !c.sec.has("sliding_window") && (c.sec.present("sliding_window") || c.family == famMixtral) {
			c.rule("sliding_window null or absent: every layer full_attention (R7)")
			break
		}
		w, err := c.slidingWindow()
		if err != nil {
			return nil, err
		}
		setAll(LayerSliding, w, func(int) bool { return true })
		c.rule("%s with sliding_window=%d: every layer sliding_attention (R7)", c.modelType, w)
	case famQwen:
		use, err := c.sec.bool("use_sliding_window")
		if err != nil {
			return nil, err
		}
		if !use || !c.sec.has("sliding_window") {
			if c.sec.has("sliding_window") {
				c.rule("sliding_window ignored: use_sliding_window is not true, every layer full_attention (R7)")
			}
			break
		}
		w, err := c.slidingWindow()
		if err != nil {
			return nil, err
		}
		from, _, err := c.sec.int("max_window_layers")
		if err != nil {
			return nil, err
		}
		setAll(LayerSliding, w, func(i int) bool { return int64(i) >= from })
		c.rule("use_sliding_window true: layers from max_window_layers=%d on are sliding_attention(%d) (transformers Qwen2 rule)", from, w)
	default:
		if c.sec.has("sliding_window") {
			c.warn("sliding_window is set but no layer rule is known for model_type %q: every layer counted as full_attention (the larger figure); check the engine", c.modelType)
		}
	}
	return plans, nil
}

func (c *calc) fromLayerTypes(lt []any, n int) ([]plan, error) {
	if len(lt) != n {
		return nil, invalidf("%s: has %d entries, but there are %d layers", c.sec.path("layer_types"), len(lt), n)
	}
	plans := make([]plan, n)
	counts := map[string]int{}
	var order []string
	for i, raw := range lt {
		s, ok := raw.(string)
		if !ok {
			return nil, invalidf("%s[%d]: want a string, got %s", c.sec.path("layer_types"), i, describe(raw))
		}
		var p plan
		switch s {
		case "full_attention", "attention":
			p.kind = LayerFull
		case "sliding_attention":
			w, err := c.slidingWindow()
			if err != nil {
				return nil, err
			}
			p = plan{kind: LayerSliding, window: w}
		case "chunked_attention":
			w, ok, err := c.chunkSize()
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, invalidf("%s[%d]: chunked_attention but %s is null", c.sec.path("layer_types"), i, c.sec.path("attention_chunk_size"))
			}
			p = plan{kind: LayerChunked, window: w}
		case "linear_attention":
			p.kind = LayerLinear
		default:
			return nil, invalidf("%s[%d]: unknown layer type %q", c.sec.path("layer_types"), i, s)
		}
		plans[i] = p
		if counts[p.kind] == 0 {
			order = append(order, p.kind)
		}
		counts[p.kind]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%d %s", counts[k], k)
	}
	c.rule("layer types from %s: %s (R7)", c.sec.path("layer_types"), strings.Join(parts, " + "))
	return plans, nil
}

func (c *calc) llama4Plans(plans []plan) ([]plan, error) {
	chunk, ok, err := c.chunkSize()
	if err != nil {
		return nil, err
	}
	if !ok {
		c.rule("attention_chunk_size null: every layer full_attention (R7)")
		return plans, nil
	}
	nr, ok, err := c.sec.list("no_rope_layers")
	if err != nil {
		return nil, err
	}
	if ok && len(nr) != len(plans) {
		return nil, invalidf("%s: has %d entries, but there are %d layers", c.sec.path("no_rope_layers"), len(nr), len(plans))
	}
	for i := range plans {
		local := (i+1)%llama4NoPEInterval != 0
		if ok {
			v, err := toInt(nr[i])
			if err != nil {
				return nil, invalidf("%s[%d]: %w", c.sec.path("no_rope_layers"), i, err)
			}
			local = v != 0
		}
		if local {
			plans[i] = plan{kind: LayerChunked, window: chunk}
		}
	}
	if ok {
		c.rule("layer types from %s: non-zero → chunked_attention(%d) (RoPE, local), 0 → full_attention (NoPE, global) (R7)", c.sec.path("no_rope_layers"), chunk)
	} else {
		c.deflt("llama4: no_rope_layers absent → NoPE (global) layer every %d layers, the rest chunked-local", llama4NoPEInterval)
		c.rule("layer types derived for llama4: (i+1) %% %d != 0 → chunked_attention(%d), else full_attention (R7)", llama4NoPEInterval, chunk)
	}
	return plans, nil
}

// slidingWindow returns the window of sliding layers, applying the class
// default where the family has one.
func (c *calc) slidingWindow() (int64, error) {
	if c.window == nil {
		w, err := c.readSlidingWindow()
		if err != nil {
			return 0, err
		}
		c.window = &w
	}
	return *c.window, nil
}

func (c *calc) readSlidingWindow() (int64, error) {
	key := "sliding_window"
	w, ok, err := c.sec.int(key)
	if err != nil {
		return 0, err
	}
	if !ok && !c.sec.present(key) {
		switch c.family {
		case famGemma3:
			c.deflt("gemma3_text: sliding_window absent → %d", gemma3DefaultWindow)
			return gemma3DefaultWindow, nil
		case famMistral:
			c.deflt("mistral: sliding_window absent → %d", mistralDefaultWindow)
			return mistralDefaultWindow, nil
		}
	}
	if !ok || w == 0 {
		return 0, invalidf("%s: missing, null or 0, but the model has sliding-window layers", c.sec.path(key))
	}
	return w, nil
}

// chunkSize returns Llama-4's attention chunk; ok is false when the config
// disables chunking with an explicit null.
func (c *calc) chunkSize() (int64, bool, error) {
	if c.chunk == nil {
		v, ok, err := c.readChunkSize()
		if err != nil {
			return 0, false, err
		}
		c.chunk = &chunk{v, ok}
	}
	return c.chunk.size, c.chunk.ok, nil
}

type chunk struct {
	size int64
	ok   bool
}

func (c *calc) readChunkSize() (int64, bool, error) {
	key := "attention_chunk_size"
	v, ok, err := c.sec.int(key)
	if err != nil {
		return 0, false, err
	}
	if ok {
		if v == 0 {
			return 0, false, invalidf("%s: must be > 0", c.sec.path(key))
		}
		return v, true, nil
	}
	if c.sec.present(key) {
		return 0, false, nil
	}
	if c.family == famLlama4 {
		c.deflt("llama4: attention_chunk_size absent → %d", llama4DefaultChunk)
		return llama4DefaultChunk, true, nil
	}
	return 0, false, invalidf("%s: missing, but the model has chunked-attention layers", c.sec.path(key))
}

// intOrDefault reads key, falling back to a named class default.
func (c *calc) intOrDefault(key string, def int64, class string) (int64, error) {
	v, ok, err := c.sec.int(key)
	if err != nil {
		return 0, err
	}
	if !ok {
		c.deflt("%s: %s absent → %d", class, key, def)
		return def, nil
	}
	return v, nil
}
