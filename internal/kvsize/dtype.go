package kvsize

import (
	"fmt"
	"strings"
)

// kvDtype is the element format of the main KV cache.
type kvDtype struct {
	name  string // canonical: bf16, fp16, fp8, fp8_e4m3, fp8_e5m2
	bytes int64
	fp8   bool
}

// parseKVDtype resolves an explicit -kv-dtype; auto is resolved against the
// config by modelDtype.
func parseKVDtype(s string) (d kvDtype, auto bool, err error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return kvDtype{}, true, nil
	case "bf16", "bfloat16":
		return kvDtype{name: "bf16", bytes: 2}, false, nil
	case "fp16", "float16", "half":
		return kvDtype{name: "fp16", bytes: 2}, false, nil
	case "fp8":
		return kvDtype{name: "fp8", bytes: 1, fp8: true}, false, nil
	case "fp8_e4m3":
		return kvDtype{name: "fp8_e4m3", bytes: 1, fp8: true}, false, nil
	case "fp8_e5m2":
		return kvDtype{name: "fp8_e5m2", bytes: 1, fp8: true}, false, nil
	}
	return kvDtype{}, false, invalidf("kv_dtype: unknown %q (want auto, bf16, fp16, fp8, fp8_e4m3 or fp8_e5m2)", s)
}

// modelDtype is the dtype the engine runs the model in. Engines serve fp32
// checkpoints and configs without a dtype in 16 bit (R10), so the result is
// always 2 bytes; what varies is the reason, which is reported.
func modelDtype(secs ...section) (d kvDtype, rule string, deflt string, err error) {
	for _, s := range secs {
		for _, key := range []string{"torch_dtype", "dtype"} {
			v, ok, err := s.str(key)
			if err != nil {
				return kvDtype{}, "", "", err
			}
			if !ok {
				continue
			}
			switch strings.ToLower(strings.TrimPrefix(v, "torch.")) {
			case "bfloat16", "bf16":
				return kvDtype{name: "bf16", bytes: 2}, fmt.Sprintf("kv dtype auto: %s=%q → bf16, 2 B/element", s.path(key), v), "", nil
			case "float16", "fp16", "half":
				return kvDtype{name: "fp16", bytes: 2}, fmt.Sprintf("kv dtype auto: %s=%q → fp16, 2 B/element", s.path(key), v), "", nil
			case "float32", "fp32", "float":
				return kvDtype{name: "bf16", bytes: 2}, fmt.Sprintf("kv dtype auto: %s=%q is served in 16 bit → 2 B/element (R10)", s.path(key), v), "", nil
			}
			return kvDtype{}, "", "", invalidf("%s: unknown model dtype %q; pass an explicit kv dtype", s.path(key), v)
		}
	}
	return kvDtype{name: "bf16", bytes: 2},
		"kv dtype auto: no torch_dtype/dtype in config → 16 bit, 2 B/element (R10)",
		"dtype: config has no torch_dtype/dtype; engines serve it in 16 bit (2 B/element)", nil
}

// parseSSMDtype returns the element size of a linear layer's recurrent state;
// 0 means "same as the conv state" (the model dtype).
func parseSSMDtype(s string) (name string, bytes int64, err error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return "", 0, nil
	case "bf16", "bfloat16":
		return "bf16", 2, nil
	case "fp16", "float16":
		return "fp16", 2, nil
	case "fp32", "float32":
		return "fp32", 4, nil
	}
	return "", 0, invalidf("ssm_dtype: unknown %q (want auto, bf16, fp16 or fp32)", s)
}
