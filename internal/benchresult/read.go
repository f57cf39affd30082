package benchresult

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// ErrUnknown is what Read says of a file in none of the formats it reads.
var ErrUnknown = errors.New("not a benchmark result ptdmon reads (want vLLM bench serve --save-result JSON, " +
	"SGLang bench_serving JSONL, AIPerf profile_export_aiperf.json or profile_export.jsonl, " +
	"GuideLLM benchmarks.json, inference-perf's lifecycle metrics, or an llm-d-benchmark report v0.2.x; docs/bench.md)")

// maxFile bounds a result file read whole: a vLLM result keeps every
// generated text, so a long run's file is large, but not this large.
const maxFile = 1 << 30

// ReadFile reads the result file at path.
func ReadFile(path string) (Result, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Result{}, err
	}
	if st.IsDir() {
		return Result{}, fmt.Errorf("%s: a directory, want a result file", path)
	}
	if st.Size() > maxFile {
		return Result{}, fmt.Errorf("%s: %d bytes, more than the %d a result file is read with", path, st.Size(), maxFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Result{}, err
	}
	r, err := Read(filepath.Base(path), b)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", path, err)
	}
	r.File = path
	return r, nil
}

// Read reads one result file's bytes; name is only for the messages. The
// format is told by the content, not the name: each tool's keys are its
// own.
func Read(name string, b []byte) (Result, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return Result{}, fmt.Errorf("empty file: %w", ErrUnknown)
	}
	if b[0] == '{' {
		lines := jsonLines(b)
		if len(lines) > 1 {
			return readJSONL(lines)
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(b, &keys); err != nil {
			return Result{}, fmt.Errorf("%w: %w", ErrUnknown, err)
		}
		return readObject(b, keys)
	}
	// An llm-d-benchmark report is YAML as often as JSON.
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil || doc == nil {
		return Result{}, ErrUnknown
	}
	j, err := json.Marshal(jsonable(doc))
	if err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrUnknown, err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(j, &keys); err != nil {
		return Result{}, ErrUnknown
	}
	if !isBR(keys) {
		return Result{}, ErrUnknown
	}
	return readBR(j)
}

// jsonLines splits JSON Lines; a single (pretty-printed) object is one
// "line", and so is anything that does not decode as a stream of values
// (its error comes from decoding it whole).
func jsonLines(b []byte) [][]byte {
	dec := json.NewDecoder(bytes.NewReader(b))
	var out [][]byte
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			return [][]byte{b}
		}
		out = append(out, raw)
	}
}

func has(keys map[string]json.RawMessage, names ...string) bool {
	for _, n := range names {
		if _, ok := keys[n]; !ok {
			return false
		}
	}
	return true
}

func readObject(b []byte, keys map[string]json.RawMessage) (Result, error) {
	switch {
	case has(keys, "load_summary", "successes"):
		return readInferencePerf(b)
	case has(keys, "benchmarks", "metadata"):
		return readGuideLLM(b)
	case isBR(keys):
		return readBR(b)
	case has(keys, "metadata", "metrics"):
		return readAIPerfRecords([][]byte{b})
	case has(keys, "request_throughput") && isObject(keys["request_throughput"]),
		has(keys, "input_config", "error_summary"):
		return readAIPerfProfile(b)
	case has(keys, "duration", "completed") && (has(keys, "median_e2e_latency_ms") || has(keys, "total_output_tokens_retokenized")):
		return readSGLang([][]byte{b})
	case has(keys, "duration", "completed") && (has(keys, "failed") || has(keys, "start_times") || has(keys, "mean_e2el_ms")):
		return readVLLM(b)
	}
	return Result{}, ErrUnknown
}

func readJSONL(lines [][]byte) (Result, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(lines[0], &keys); err != nil {
		return Result{}, fmt.Errorf("line 1: %w: %w", ErrUnknown, err)
	}
	switch {
	case has(keys, "metadata", "metrics"), has(keys, "metadata", "error"):
		return readAIPerfRecords(lines)
	case has(keys, "duration", "completed"):
		return readSGLang(lines)
	}
	return Result{}, fmt.Errorf("line 1: %w", ErrUnknown)
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

func isBR(keys map[string]json.RawMessage) bool {
	var v string
	if json.Unmarshal(keys["version"], &v) != nil {
		return false
	}
	return len(v) >= 3 && v[:3] == "0.2" && has(keys, "results")
}

// jsonable makes a YAML document encodable as JSON: YAML has .inf and .nan
// (an llm-d report's unbounded concurrency is .inf), JSON has not; they
// become strings, which no figure read here is.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return fmt.Sprint(x)
		}
	}
	return v
}
