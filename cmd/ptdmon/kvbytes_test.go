package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/kvsize"
)

// Named -update-kvbytes so it cannot clash with other tests' -update flag.
var updateKVBytes = flag.Bool("update-kvbytes", false, "rewrite cmd/ptdmon/testdata/kvbytes golden files")

func kvConfig(model string) string {
	return filepath.Join("..", "..", "internal", "kvsize", "testdata", model, "config.json")
}

func runKV(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = runKVBytes(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestKVBytesJSON: -json decodes and carries the B_request of
// docs/kvbytes.md#main-table.
func TestKVBytesJSON(t *testing.T) {
	f := func(model string, want int64, extra ...string) {
		t.Helper()
		args := append([]string{"-model-config", kvConfig(model), "-json"}, extra...)
		code, out, errs := runKV(args...)
		if code != 0 {
			t.Fatalf("%s %v: exit %d, stderr %s", model, extra, code, errs)
		}
		var r kvsize.Result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%s: -json output does not decode: %v\n%s", model, err, out)
		}
		if r.BytesPerRequest != want {
			t.Errorf("%s %v: bytes_per_request %d, want %d", model, extra, r.BytesPerRequest, want)
		}
		if !strings.Contains(out, `"bytes_per_request": `) {
			t.Errorf("%s: JSON lacks bytes_per_request", model)
		}
	}
	f("llama-3.1-70b", 2_684_354_560, "-seq-len", "8192")
	f("llama-3.1-70b", 2_684_354_560/2, "-seq-len", "8192", "-kv-dtype", "fp8")
	f("deepseek-v3", 1_151_336_448, "-seq-len", "16384")
	f("gemma-3-27b", 1_107_296_256, "-seq-len", "8192")
	f("gemma-3-27b", 4_160_749_568, "-seq-len", "8192", "-window-mode", "full")
	f("qwen3-next-80b-a3b", 278_593_536, "-seq-len", "8192", "-ssm-dtype", "fp32")
	f("deepseek-v3", 71_424*8192, "-seq-len", "8192", "-mtp")

	// TP (docs/kvbytes.md#tensor-parallelism): DeepSeek-V3 TP8 without DP attention moves 562,176 B per token.
	code, out, _ := runKV("-model-config", kvConfig("deepseek-v3"), "-seq-len", "8192", "-tp", "8", "-json")
	var r kvsize.Result
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.WireBytesPerRequest != 562_176*8192 || r.TPWireFactor != 8 {
		t.Errorf("deepseek-v3 tp8: exit %d wire %d factor %v, want 0, %d, 8", code, r.WireBytesPerRequest, r.TPWireFactor, 562_176*8192)
	}
	code, out, _ = runKV("-model-config", kvConfig("deepseek-v3"), "-seq-len", "8192", "-tp", "8", "-dp-attention", "-json")
	r = kvsize.Result{}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.TPWireFactor != 1 {
		t.Errorf("deepseek-v3 tp8 dp-attention: exit %d factor %v, want 0 and 1", code, r.TPWireFactor)
	}
}

func TestKVBytesExitCodes(t *testing.T) {
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "config.json")
	if err := os.WriteFile(notJSON, []byte("<html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	llama := kvConfig("llama-3.1-8b")
	f := func(want int, stderrHas string, args ...string) {
		t.Helper()
		code, out, errs := runKV(args...)
		if code != want {
			t.Errorf("%v: exit %d, want %d (stderr %s)", args, code, want, errs)
		}
		if want != 0 && out != "" {
			t.Errorf("%v: failure wrote to stdout: %s", args, out)
		}
		if !strings.Contains(errs, stderrHas) {
			t.Errorf("%v: stderr %q lacks %q", args, errs, stderrHas)
		}
	}
	f(0, "", "-model-config", llama, "-seq-len", "8192")
	f(0, "", "-h")
	f(2, "missing the model's config.json", "-seq-len", "8192")
	// The config as the argument, as other commands take their file.
	f(0, "", "-seq-len", "8192", llama)
	f(2, "two configs", "-seq-len", "8192", "-model-config", llama, notJSON)
	f(2, "-seq-len is required", "-model-config", llama)
	f(2, "seq_len: must be > 0", "-model-config", llama, "-seq-len", "-1")
	f(2, "kv_dtype", "-model-config", llama, "-seq-len", "8192", "-kv-dtype", "int4")
	f(2, "window_mode", "-model-config", llama, "-seq-len", "8192", "-window-mode", "half")
	f(2, "tp: attention TP 3", "-model-config", llama, "-seq-len", "8192", "-tp", "3")
	f(2, notJSON+": not JSON", "-model-config", notJSON, "-seq-len", "8192")
	f(2, "nope.json", "-model-config", filepath.Join(dir, "nope.json"), "-seq-len", "8192")
	f(2, "flag provided but not defined", "-model-config", llama, "-seq-len", "8192", "-bogus")
	f(2, "unexpected argument", "-model-config", llama, "-seq-len", "8192", llama, "extra")
	// A directory named as the file is a mistake in the command line.
	f(2, "-model-config "+dir+": is a directory", "-model-config", dir, "-seq-len", "8192")
}

// TestKVBytesHuman compares the human output with golden files, and checks
// the figures of docs/kvbytes.md#main-table appear in it.
func TestKVBytesHuman(t *testing.T) {
	f := func(golden string, mustHave []string, args ...string) {
		t.Helper()
		code, out, errs := runKV(args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", golden, code, errs)
		}
		for _, s := range mustHave {
			if !strings.Contains(out, s) {
				t.Errorf("%s: output lacks %q", golden, s)
			}
		}
		path := filepath.Join("testdata", "kvbytes", golden)
		if *updateKVBytes {
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestKVBytesHuman -update-kvbytes)", err)
		}
		if out != string(want) {
			t.Errorf("%s: output differs from golden file\n--- got\n%s\n--- want\n%s", golden, out, want)
		}
	}
	f("llama-3.1-70b.txt", []string{
		"B_request        2,684,354,560 B (2.500 GiB)",
		"per-token bytes  327,680 B (320.0 KiB)",
		"80 × full attention, 8192 tokens",
	}, "-model-config", kvConfig("llama-3.1-70b"), "-seq-len", "8192")
	f("gemma-3-27b-window.txt", []string{
		"B_request        1,107,296,256 B (1.031 GiB)",
		"52 × sliding attention (window 1024), 1024 tokens",
		"10 × full attention, 8192 tokens",
	}, "-model-config", kvConfig("gemma-3-27b"), "-seq-len", "8192")
	f("qwen3-30b-a3b-tp8.txt", []string{
		"B_request        805,306,368 B (768.0 MiB)",
		"TP wire factor   2:",
		"1,610,612,736 B", // 196,608 B/token × 8192 (docs/kvbytes.md#tensor-parallelism)
	}, "-model-config", kvConfig("qwen3-30b-a3b"), "-seq-len", "8192", "-tp", "8")
	f("gemma-3-4b-fp8.txt", []string{
		"B_request        228,589,568 B", // main table W at 16384 (457,179,136) ÷ 2 for fp8
		"gemma3_text: head_dim absent → 256",
	}, "-model-config", kvConfig("gemma-3-4b"), "-seq-len", "16384", "-kv-dtype", "fp8")
}
