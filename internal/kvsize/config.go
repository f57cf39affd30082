package kvsize

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// section is one JSON object of the config, with the path used to name its
// fields in errors and rules ("text_config.head_dim").
type section struct {
	name string
	m    map[string]any
}

func (s section) path(key string) string {
	if s.name == "" {
		return key
	}
	return s.name + "." + key
}

// where names a field for a rule: "config.json head_dim" at the top level,
// "text_config.head_dim" when nested.
func (s section) where(key string) string {
	if s.name == "" {
		return "config.json " + key
	}
	return s.path(key)
}

// has reports whether key is present and not null: HF configs use null to
// mean "disabled" (sliding_window, q_lora_rank), which differs from absent.
func (s section) has(key string) bool {
	v, ok := s.m[key]
	return ok && v != nil
}

// present reports whether key exists at all, null included.
func (s section) present(key string) bool {
	_, ok := s.m[key]
	return ok
}

// maxField bounds every integer field; real configs are far below it and the
// bound keeps the products of a few fields inside int64.
const maxField = 1 << 40

// int returns key as a non-negative integer; ok is false when absent or null.
func (s section) int(key string) (v int64, ok bool, err error) {
	raw, found := s.m[key]
	if !found || raw == nil {
		return 0, false, nil
	}
	v, err = toInt(raw)
	if err != nil {
		return 0, false, invalidf("%s: %w", s.path(key), err)
	}
	return v, true, nil
}

// firstInt returns the first present key of aliases.
func (s section) firstInt(keys ...string) (v int64, key string, ok bool, err error) {
	for _, k := range keys {
		v, ok, err = s.int(k)
		if err != nil || ok {
			return v, k, ok, err
		}
	}
	return 0, "", false, nil
}

func (s section) str(key string) (string, bool, error) {
	raw, found := s.m[key]
	if !found || raw == nil {
		return "", false, nil
	}
	str, isStr := raw.(string)
	if !isStr {
		return "", false, invalidf("%s: want a string, got %s", s.path(key), describe(raw))
	}
	return str, true, nil
}

func (s section) bool(key string) (bool, error) {
	raw, found := s.m[key]
	if !found || raw == nil {
		return false, nil
	}
	b, isBool := raw.(bool)
	if !isBool {
		return false, invalidf("%s: want true or false, got %s", s.path(key), describe(raw))
	}
	return b, nil
}

func (s section) list(key string) ([]any, bool, error) {
	raw, found := s.m[key]
	if !found || raw == nil {
		return nil, false, nil
	}
	l, isList := raw.([]any)
	if !isList {
		return nil, false, invalidf("%s: want a list, got %s", s.path(key), describe(raw))
	}
	return l, true, nil
}

func toInt(raw any) (int64, error) {
	n, isNum := raw.(json.Number)
	if !isNum {
		return 0, fmt.Errorf("want an integer, got %s", describe(raw))
	}
	v, err := n.Int64()
	if err != nil {
		// 4.0 is an integer written by a float-minded serializer; 4.5 is not.
		f, ferr := strconv.ParseFloat(string(n), 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > maxField {
			return 0, fmt.Errorf("want an integer, got %s", n)
		}
		v = int64(f)
	}
	if v < 0 {
		return 0, fmt.Errorf("want a non-negative integer, got %d", v)
	}
	if v > maxField {
		return 0, fmt.Errorf("%d is implausibly large", v)
	}
	return v, nil
}

func describe(raw any) string {
	switch v := raw.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(v)
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		return string(v)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", raw)
}

// parseObject decodes a config.json that must be one JSON object.
func parseObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // keep 131072 exact and tell 4 from 4.5
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, invalidf("not JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, invalidf("not JSON: trailing data after the top-level object")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalidf("not a JSON object (got %s)", describe(v))
	}
	return m, nil
}

// nestedKeys are where multimodal wrappers keep the language model (R1).
var nestedKeys = []string{"text_config", "llm_config", "language_config"}

// attentionSection returns the section holding the attention fields: the first
// nested language-model config present, else the top level.
func attentionSection(top section) (section, error) {
	for _, k := range nestedKeys {
		raw, found := top.m[k]
		if !found || raw == nil {
			continue
		}
		m, ok := raw.(map[string]any)
		if !ok {
			return section{}, invalidf("%s: want an object, got %s", k, describe(raw))
		}
		return section{name: k, m: m}, nil
	}
	return top, nil
}
