package reqledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// parseID reads a request id from its raw JSON value without going through
// float64: an integer literal is checked with strconv and kept as text, a
// string is kept as written (TensorRT-LLM writes non-numeric ids as strings).
func parseID(raw json.RawMessage) (ID, error) {
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
