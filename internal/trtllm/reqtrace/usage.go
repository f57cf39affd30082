package reqtrace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Usage maps a request id to its token counts. The perf-metrics record has
// no output-token count (docs/trtllm.md#output-tokens), so TPOT needs this input.
type Usage map[ID]TokenUsage

// TokenUsage is the OpenAI "usage" shape; -1 means unknown.
type TokenUsage struct {
	PromptTokens     int64
	CompletionTokens int64
}

// ParseUsage reads a JSON object mapping request id → {"prompt_tokens",
// "completion_tokens"} (docs/trtllm.md#output-tokens). Ids are object keys, i.e. strings,
// so 64-bit ids stay exact. A wrapping {"usage": {...}} is accepted too.
func ParseUsage(b []byte) (Usage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	if inner, ok := m["usage"]; ok && len(m) == 1 && bytes.HasPrefix(bytes.TrimSpace(inner), []byte("{")) {
		if err := json.Unmarshal(inner, &m); err != nil {
			return nil, fmt.Errorf("usage: %w", err)
		}
	}
	u := make(Usage, len(m))
	for k, raw := range m {
		var w struct {
			Prompt     json.Number `json:"prompt_tokens"`
			Completion json.Number `json:"completion_tokens"`
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&w); err != nil {
			return nil, fmt.Errorf("usage of request %s: %w", k, err)
		}
		tu := TokenUsage{PromptTokens: -1, CompletionTokens: -1}
		var err error
		if tu.PromptTokens, err = count(w.Prompt); err != nil {
			return nil, fmt.Errorf("usage of request %s: prompt_tokens: %w", k, err)
		}
		if tu.CompletionTokens, err = count(w.Completion); err != nil {
			return nil, fmt.Errorf("usage of request %s: completion_tokens: %w", k, err)
		}
		u[ID(k)] = tu
	}
	return u, nil
}

func count(n json.Number) (int64, error) {
	if n == "" {
		return -1, nil
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, fmt.Errorf("negative count %d", v)
	}
	return v, nil
}
