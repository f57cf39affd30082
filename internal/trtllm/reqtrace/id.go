package reqtrace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// ParseID reads a request id from its raw JSON value without going through
// float64: an integer literal is checked with strconv and kept as text, a
// string is kept as written (TensorRT-LLM writes non-numeric ids as strings).
// null or nothing is the unknown id "". It is ptdmon's one id parser: the
// iteration-statistics reader uses it too.
func ParseID(raw json.RawMessage) (ID, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("request id %s: %w", raw, err)
		}
		return ID(s), nil
	}
	s := string(raw)
	if _, err := strconv.ParseUint(s, 10, 64); err == nil {
		return ID(s), nil
	}
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ID(s), nil
	}
	return "", fmt.Errorf("request id %s is not a 64-bit integer or a string", raw)
}

// Uint64 is the id as a 64-bit integer, when it is one (a negative id is
// kept as its two's-complement bits, so distinct ids stay distinct).
func (id ID) Uint64() (uint64, bool) {
	if v, err := strconv.ParseUint(string(id), 10, 64); err == nil {
		return v, true
	}
	if v, err := strconv.ParseInt(string(id), 10, 64); err == nil {
		return uint64(v), true
	}
	return 0, false
}
