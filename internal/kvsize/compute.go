package kvsize

import "fmt"

// calc carries one computation and the audit trail it produces.
type calc struct {
	opts      Options
	top, sec  section
	modelType string
	family    string
	ar        arith
	res       Result
	// Looked up once, so a class default is reported once, not per layer.
	window *int64
	chunk  *chunk
}

func (c *calc) rule(format string, args ...any) {
	c.res.Rules = append(c.res.Rules, fmt.Sprintf(format, args...))
}
func (c *calc) deflt(format string, args ...any) {
	c.res.Defaults = append(c.res.Defaults, fmt.Sprintf(format, args...))
}
func (c *calc) warn(format string, args ...any) {
	c.res.Warnings = append(c.res.Warnings, fmt.Sprintf(format, args...))
}

// attention is the per-token, per-layer cost of one attention layer.
type attention struct {
	bytesPerToken int64
	mla           bool
	kvHeads       int64 // 0 for MLA
}

func compute(name string, data []byte, opts Options) (Result, error) {
	kv, auto, err := checkOptions(opts)
	if err != nil {
		return Result{}, fmt.Errorf("kvsize: %w", err)
	}
	r, err := fromConfig(data, opts, kv, auto)
	if err != nil {
		return Result{}, fmt.Errorf("kvsize: %s: %w", name, err)
	}
	return r, nil
}

// maxSeqLen is far above any context window; it only keeps products in int64.
const maxSeqLen = 1 << 32

func checkOptions(o Options) (kvDtype, bool, error) {
	if o.SeqLen <= 0 {
		return kvDtype{}, false, invalidf("seq_len: must be > 0, got %d", o.SeqLen)
	}
	if o.SeqLen > maxSeqLen {
		return kvDtype{}, false, invalidf("seq_len: %d is implausibly large", o.SeqLen)
	}
	if o.TP < 0 {
		return kvDtype{}, false, invalidf("tp: must be >= 0, got %d", o.TP)
	}
	switch o.WindowMode {
	case "", WindowModeWindow, WindowModeFull:
	default:
		return kvDtype{}, false, invalidf("window_mode: unknown %q (want window or full)", o.WindowMode)
	}
	if _, _, err := parseSSMDtype(o.SSMDtype); err != nil {
		return kvDtype{}, false, err
	}
	return parseKVDtype(o.KVDtype)
}

func fromConfig(data []byte, opts Options, kv kvDtype, auto bool) (Result, error) {
	m, err := parseObject(data)
	if err != nil {
		return Result{}, err
	}
	c := &calc{opts: opts, top: section{m: m}}
	if c.sec, err = attentionSection(c.top); err != nil {
		return Result{}, err
	}
	if err := c.inputs(); err != nil {
		return Result{}, err
	}
	if auto {
		d, rule, deflt, err := modelDtype(c.top, c.sec)
		if err != nil {
			return Result{}, err
		}
		kv = d
		c.rule("%s", rule)
		if deflt != "" {
			c.deflt("%s", deflt)
		}
	} else {
		c.rule("kv dtype %s: %d B/element, no per-token scale bytes (R10)", kv.name, kv.bytes)
	}
	c.res.Inputs.ResolvedDtype = kv.name
	c.res.ElementBytes = int(kv.bytes)

	n, err := c.numLayers()
	if err != nil {
		return Result{}, err
	}
	att, err := c.attention(kv)
	if err != nil {
		return Result{}, err
	}
	plans, err := c.layerPlans(n)
	if err != nil {
		return Result{}, err
	}
	if plans, err = c.mtp(plans); err != nil {
		return Result{}, err
	}
	if err := c.layers(plans, att); err != nil {
		return Result{}, err
	}
	if err := c.tensorParallel(att); err != nil {
		return Result{}, err
	}
	if err := c.checkRange(); err != nil {
		return Result{}, err
	}
	c.warnUnmodelled()
	if c.ar.err != nil {
		return Result{}, c.ar.err
	}
	if c.res.BytesPerRequest <= 0 {
		return Result{}, invalidf("computed 0 bytes per request; the config describes no KV-holding layer")
	}
	// Empty lists, not null, so JSON consumers need no special case.
	for _, l := range []*[]string{&c.res.Rules, &c.res.Defaults, &c.res.Warnings} {
		if *l == nil {
			*l = []string{}
		}
	}
	return c.res, nil
}

func (c *calc) inputs() error {
	mt, _, err := c.top.str("model_type")
	if err != nil {
		return err
	}
	inner := ""
	if c.sec.name != "" {
		if inner, _, err = c.sec.str("model_type"); err != nil {
			return err
		}
	}
	c.modelType = mt
	if mt == "" {
		c.modelType = inner
	}
	c.family = familyOf(mt, inner)
	archs, _, err := c.top.list("architectures")
	if err != nil {
		return err
	}
	for i, a := range archs {
		s, ok := a.(string)
		if !ok {
			return invalidf("architectures[%d]: want a string, got %s", i, describe(a))
		}
		c.res.Inputs.Architectures = append(c.res.Inputs.Architectures, s)
	}
	mode := c.opts.WindowMode
	if mode == "" {
		mode = WindowModeWindow
	}
	ssm, _, _ := parseSSMDtype(c.opts.SSMDtype)
	c.res.Inputs = Inputs{
		ModelType:     c.modelType,
		Architectures: c.res.Inputs.Architectures,
		ConfigSection: c.sec.name,
		SeqLen:        c.opts.SeqLen,
		KVDtype:       c.opts.KVDtype,
		TP:            max(1, c.opts.TP),
		DPAttention:   c.opts.DPAttention,
		WindowMode:    mode,
		MTP:           c.opts.MTP,
		SSMDtype:      ssm,
	}
	if c.res.Inputs.KVDtype == "" {
		c.res.Inputs.KVDtype = "auto"
	}
	if c.sec.name != "" {
		c.rule("attention fields read from %s; model_type and architectures from the top level (R1)", c.sec.name)
	}
	return nil
}

func (c *calc) numLayers() (int, error) {
	v, key, ok, err := c.sec.firstInt("num_hidden_layers", "n_layer", "num_layers", "n_layers")
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, invalidf("%s: missing", c.sec.path("num_hidden_layers"))
	}
	if v == 0 || v > maxLayers {
		return 0, invalidf("%s: %d layers is out of range (1..%d)", c.sec.path(key), v, maxLayers)
	}
	return int(v), nil
}

// attention computes one attention layer's bytes per token: the MLA latent
// (R4, R5) or K and V of every KV head (R3).
func (c *calc) attention(kv kvDtype) (attention, error) {
	if c.sec.has("kv_lora_rank") {
		return c.mla(kv)
	}
	s := c.sec
	heads, headsKey, hasHeads, err := s.firstInt("num_attention_heads", "n_head", "num_heads", "n_heads")
	if err != nil {
		return attention{}, err
	}
	kvh, kvKey, hasKV, err := c.kvHeads()
	if err != nil {
		return attention{}, err
	}
	hd, hasHD, err := s.int("head_dim")
	if err != nil {
		return attention{}, err
	}
	if !hasHeads && !hasKV && !hasHD && c.family != famGemma3 {
		return attention{}, invalidf("no num_attention_heads/num_key_value_heads/head_dim and no known defaults for model_type %q", c.modelType)
	}
	switch {
	case hasKV:
	case c.family == famGemma3:
		kvh, kvKey = gemma3DefaultKV, "num_key_value_heads"
		c.deflt("gemma3_text: num_key_value_heads absent → %d", kvh)
	case hasHeads:
		kvh, kvKey = heads, "num_key_value_heads"
		c.deflt("num_key_value_heads absent → num_attention_heads=%d (MHA)", heads)
	default:
		return attention{}, invalidf("%s: missing, and no num_attention_heads to default it to", s.path("num_key_value_heads"))
	}
	if kvh == 0 {
		return attention{}, invalidf("%s: must be > 0", s.path(kvKey))
	}

	hidden, hiddenKey, hasHidden, err := s.firstInt("hidden_size", "n_embd", "d_model")
	if err != nil {
		return attention{}, err
	}
	derived := int64(-1) // hidden/heads, when it is an integer
	if hasHidden && hasHeads && heads > 0 && hidden%heads == 0 {
		derived = hidden / heads
	}
	switch {
	case hasHD && derived >= 0 && derived != hd:
		c.rule("head_dim=%d from %s (%s/%s would give %d) (R3)", hd, s.where("head_dim"), hiddenKey, headsKey, derived)
	case hasHD:
		c.rule("head_dim=%d from %s (R3)", hd, s.where("head_dim"))
	case c.family == famGemma3:
		hd = gemma3DefaultHeadDim
		c.deflt("gemma3_text: head_dim absent → %d", hd)
	case derived >= 0:
		hd = derived
		c.rule("head_dim absent → %s/%s = %d/%d = %d (R3)", hiddenKey, headsKey, hidden, heads, hd)
	case !hasHidden || !hasHeads:
		return attention{}, invalidf("%s: missing, and no hidden_size and num_attention_heads to derive it", s.path("head_dim"))
	default:
		return attention{}, invalidf("%s: missing, and %s %d is not divisible by %s %d", s.path("head_dim"), hiddenKey, hidden, headsKey, heads)
	}
	if hd == 0 {
		return attention{}, invalidf("%s: must be > 0", s.path("head_dim"))
	}
	vhd, hasV, err := s.int("v_head_dim")
	if err != nil {
		return attention{}, err
	}
	if hasV {
		c.rule("GQA/MHA: per layer %s=%d × (head_dim %d + v_head_dim %d) × %d B (R3)", kvKey, kvh, hd, vhd, kv.bytes)
	} else {
		vhd = hd
		c.rule("GQA/MHA: per layer %s=%d × 2 (K and V) × head_dim %d × %d B (R3)", kvKey, kvh, hd, kv.bytes)
	}
	return attention{bytesPerToken: c.ar.mul(kvh, hd+vhd, kv.bytes), kvHeads: kvh}, nil
}

// kvHeads reads the KV head count under the names engines accept
// (docs/kvbytes.md#r2).
func (c *calc) kvHeads() (int64, string, bool, error) {
	v, key, ok, err := c.sec.firstInt("num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num", "num_attention_groups")
	if err != nil || ok {
		return v, key, ok, err
	}
	if raw, isObj := c.sec.m["attn_config"].(map[string]any); isObj {
		ac := section{name: c.sec.path("attn_config"), m: raw}
		if v, ok, err := ac.int("kv_n_heads"); err != nil || ok {
			return v, "attn_config.kv_n_heads", ok, err
		}
	}
	mq, err := c.sec.bool("multi_query")
	if err != nil {
		return 0, "", false, err
	}
	if mq {
		return 1, "multi_query", true, nil
	}
	return 0, "", false, nil
}

func (c *calc) mla(kv kvDtype) (attention, error) {
	s := c.sec
	rank, _, err := s.int("kv_lora_rank")
	if err != nil {
		return attention{}, err
	}
	rope, ok, err := s.int("qk_rope_head_dim")
	if err != nil {
		return attention{}, err
	}
	if !ok {
		return attention{}, invalidf("%s: missing, but kv_lora_rank makes this an MLA model", s.path("qk_rope_head_dim"))
	}
	if rank+rope == 0 {
		return attention{}, invalidf("%s + %s: must be > 0", s.path("kv_lora_rank"), s.path("qk_rope_head_dim"))
	}
	ignored := ""
	if v, ok, _ := s.int("num_key_value_heads"); ok {
		ignored = fmt.Sprintf("; num_key_value_heads=%d ignored", v)
	}
	per := c.ar.mul(rank+rope, kv.bytes)
	if !s.has("index_topk") {
		c.rule("MLA: kv_lora_rank+qk_rope_head_dim = %d+%d per layer × %d B, one latent copy, no ×2, no heads%s (R4)", rank, rope, kv.bytes, ignored)
		return attention{bytesPerToken: per, mla: true}, nil
	}
	idx, ok, err := s.int("index_head_dim")
	if err != nil {
		return attention{}, err
	}
	if !ok || idx == 0 {
		return attention{}, invalidf("%s: missing or 0, but index_topk makes this a DSA model", s.path("index_head_dim"))
	}
	// The indexer key is fp8 with one fp32 scale per 128 elements whatever the
	// KV dtype; an fp8 main cache on DSA backends is the fp8_ds_mla layout.
	indexer := idx + idx/128*4
	if kv.fp8 {
		per = rank + rank/128*4 + rope*2
		c.rule("MLA+DSA, fp8: fp8_ds_mla latent %d+%d/128×4+%d×2 = %d B + indexer key %d B per layer, no heads%s (R4, R5)", rank, rank, rope, per, indexer, ignored)
	} else {
		c.rule("MLA+DSA: latent (kv_lora_rank+qk_rope_head_dim = %d+%d) × %d B + indexer key %d+%d/128×4 = %d B per layer, one copy, no ×2%s (R4, R5)", rank, rope, kv.bytes, idx, idx, indexer, ignored)
	}
	return attention{bytesPerToken: c.ar.add(per, indexer), mla: true}, nil
}

// mtp appends the MTP draft layers, which hold KV only with MTP speculative
// decoding on (R6).
func (c *calc) mtp(plans []plan) ([]plan, error) {
	n, key, ok, err := c.sec.firstInt("num_nextn_predict_layers")
	if err == nil && !ok && c.sec.name != "" {
		n, key, ok, err = c.top.firstInt("num_nextn_predict_layers")
	}
	if err != nil {
		return nil, err
	}
	switch {
	case !ok || n == 0:
		if c.opts.MTP {
			c.warn("MTP requested but the config has no num_nextn_predict_layers; no draft layers added")
		}
		return plans, nil
	case !c.opts.MTP:
		c.rule("%s=%d MTP layer(s) excluded: they hold KV only with MTP speculative decoding (R6)", key, n)
		return plans, nil
	case n > maxLayers:
		return nil, invalidf("%s: %d is out of range", key, n)
	}
	c.rule("%s=%d MTP layer(s) added as full_attention: MTP speculative decoding on (R6)", key, n)
	for range n {
		plans = append(plans, plan{kind: "mtp"})
	}
	return plans, nil
}

// layers fills per-layer bytes and their sums (R8).
func (c *calc) layers(plans []plan, att attention) error {
	S := int64(c.opts.SeqLen)
	full := c.res.Inputs.WindowMode == WindowModeFull
	var state int64
	hasWindowed := false
	for i, p := range plans {
		l := Layer{Index: i, Type: p.kind, Window: int(p.window)}
		switch p.kind {
		case LayerLinear:
			if state == 0 {
				var err error
				if state, err = c.linearState(); err != nil {
					return err
				}
			}
			l.StateBytes = state
			l.Bytes = state
			c.res.StateBytesPerRequest = c.ar.add(c.res.StateBytesPerRequest, state)
		default:
			tokens := S
			if p.kind == "mtp" {
				l.Type, l.MTP = LayerFull, true
			}
			if p.kind == LayerSliding || p.kind == LayerChunked {
				hasWindowed = true
				if !full {
					tokens = min(S, p.window)
				}
			}
			l.TokensHeld = int(tokens)
			l.BytesPerToken = att.bytesPerToken
			l.Bytes = c.ar.mul(att.bytesPerToken, tokens)
			c.res.PerTokenBytes = c.ar.add(c.res.PerTokenBytes, att.bytesPerToken)
		}
		c.res.BytesPerRequest = c.ar.add(c.res.BytesPerRequest, l.Bytes)
		c.res.Layers = append(c.res.Layers, l)
	}
	c.res.Groups = group(c.res.Layers)
	switch {
	case !hasWindowed:
		c.rule("every KV layer holds all S=%d tokens; window mode has no effect (R8)", S)
	case full:
		c.rule("window mode full: every layer holds all S=%d tokens, sliding/chunked layers included (R8, R9: vLLM connector without HMA; SGLang for Gemma-2/3)", S)
	default:
		c.rule("window mode window: sliding/chunked layers hold min(S, window) tokens, full layers S=%d (R8, R9)", S)
	}
	return nil
}

// linearState is the fixed per-request state of one Gated-DeltaNet layer:
// conv state plus recurrent state (R8). The conv state is in the model dtype;
// the recurrent state has its own knob (R10).
func (c *calc) linearState() (int64, error) {
	keys := []string{"linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim"}
	vals := make([]int64, len(keys))
	for i, k := range keys {
		v, ok, err := c.sec.int(k)
		if err != nil {
			return 0, err
		}
		if !ok || v == 0 {
			return 0, invalidf("%s: missing or 0, but the model has linear-attention layers", c.sec.path(k))
		}
		vals[i] = v
	}
	nk, nv, dk, dv, kernel := vals[0], vals[1], vals[2], vals[3], vals[4]
	md, _, _, err := modelDtype(c.top, c.sec)
	if err != nil {
		return 0, err
	}
	ssmName, ssmBytes, _ := parseSSMDtype(c.opts.SSMDtype)
	if ssmBytes == 0 {
		ssmName, ssmBytes = md.name, md.bytes
	}
	convDim := c.ar.add(c.ar.mul(dk, nk, 2), c.ar.mul(dv, nv))
	conv := c.ar.mul(convDim, kernel-1, md.bytes)
	ssm := c.ar.mul(nv, dv, dk, ssmBytes)
	c.rule("linear_attention state per layer, independent of S and of the KV dtype: conv (%d×%d×2+%d×%d)×(%d−1)×%d B + recurrent %d×%d×%d×%d B (%s) = %d B (R8, R10)",
		dk, nk, dv, nv, kernel, md.bytes, nv, dv, dk, ssmBytes, ssmName, conv+ssm)
	return c.ar.add(conv, ssm), nil
}

// group merges identical layers, in order of first appearance.
func group(layers []Layer) []LayerGroup {
	var out []LayerGroup
	idx := map[LayerGroup]int{}
	for _, l := range layers {
		key := LayerGroup{Type: l.Type, Window: l.Window, TokensHeld: l.TokensHeld, BytesPerToken: l.BytesPerToken, StateBytes: l.StateBytes, BytesPerLayer: l.Bytes, MTP: l.MTP}
		i, ok := idx[key]
		if !ok {
			i = len(out)
			idx[key] = i
			out = append(out, key)
		}
		out[i].Count++
		out[i].Bytes += l.Bytes
	}
	return out
}
