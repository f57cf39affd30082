package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/config"
)

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := dispatch(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestInspect(t *testing.T) {
	f := func(wantCode int, wantOut, wantErr string, args ...string) {
		t.Helper()
		code, out, errs := runCmd(append([]string{"inspect"}, args...)...)
		if code != wantCode || !strings.Contains(out, wantOut) || !strings.Contains(errs, wantErr) {
			t.Errorf("inspect %v: exit %d, stdout %.200q, stderr %.200q; want exit %d, %q, %q", args, code, out, errs, wantCode, wantOut, wantErr)
		}
	}
	capture := filepath.Join("..", "..", "internal", "engine", "testdata", "vllm_prefill_flagcx.txt")
	f(0, `"engine": "vllm"`, "", "-json", "-role", "prefill", capture)
	f(0, `"requests_completed": 1993`, "", "-json", "-role", "prefill", capture)
	f(0, `"family": "vllm:flagcx_bytes_transferred"`, "", "-json", capture)          // ignored, with the reason
	f(0, `role unknown`, "", "-json", capture)                                       // without -role: said, not fatal
	f(0, "requests_completed                 1993", "", capture, "-role", "prefill") // summary; flags after the file
	f(0, "engine     vllm\nprefix     vllm: (", "", capture)
	// A partial dump of histograms ptdmon does not read is still vLLM, by its prefix.
	unread := filepath.Join("..", "..", "internal", "engine", "testdata", "vllm_unread_histograms.txt")
	f(0, "engine     vllm\nprefix     vllm: (2 families)\n", "", unread)
	f(0, `"prefix": "vllm:",`+"\n"+`  "families_matched": 2,`, "", "-json", unread)
	f(2, "", "not a Prometheus", filepath.Join("..", "..", "internal", "engine", "testdata", "reports", "trtllm_issue_2004_aibrix_metrics_json.txt"))
	f(2, "", "no such file", "/nonexistent/metrics.txt")
	f(2, "", "-role \"gateway\"", "-role", "gateway", capture)
	f(2, "", "unexpected argument \"extra\"", capture, "extra")
	f(2, "", "is a directory", t.TempDir())

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := os.ReadFile(filepath.Join("..", "..", "internal", "engine", "testdata", "sglang_prefill.txt"))
		w.Write(b)
	}))
	defer srv.Close()
	code, out, _ := runCmd("inspect", "-json", srv.URL)
	var got struct {
		Engine   string             `json:"engine"`
		Role     string             `json:"role"`
		Counters map[string]float64 `json:"counters"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
		t.Fatalf("inspect URL: exit %d, %v", code, err)
	}
	if got.Engine != "sglang" || got.Role != "prefill" || got.Counters["requests_completed"] != 500 {
		t.Errorf("inspect URL: %+v", got)
	}

	// A password in the URL is used, never shown: not in the summary, not
	// in an error.
	withPass := strings.Replace(srv.URL, "http://", "http://scraper:s3cret@", 1)
	for _, args := range [][]string{{withPass}, {"-json", withPass}, {withPass + "/x", "-role", "decode"}} {
		code, out, errs := runCmd(append([]string{"inspect"}, args...)...)
		if strings.Contains(out+errs, "s3cret") || !strings.Contains(out+errs, "scraper:xxxxx@") {
			t.Errorf("inspect %v: exit %d, the password is shown or the URL is missing:\n%s%s", args, code, out, errs)
		}
	}
	srv.Close()
	if code, out, errs := runCmd("inspect", withPass); code != 1 || strings.Contains(out+errs, "s3cret") {
		t.Errorf("inspect on a refused URL: exit %d, stdout %q, stderr %q; want exit 1 and no password", code, out, errs)
	}
}

func TestServeConfigErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ptdmon.yaml")
	os.WriteFile(cfg, []byte("interval: 1s\ntargets:\n  - url: http://127.0.0.1:1/metrics\n    rol: prefill\n"), 0o644)
	f := func(wantErr string, args ...string) {
		t.Helper()
		code, _, errs := runCmd(append([]string{"serve"}, args...)...)
		if code != 2 || !strings.Contains(errs, wantErr) {
			t.Errorf("serve %v: exit %d, stderr %q; want exit 2 and %q", args, code, errs, wantErr)
		}
	}
	f(cfg+":4: field rol not found", "-config", cfg)
	f("no targets")
	f("window", "-prefill", "http://127.0.0.1:1/metrics", "-window", "1s")
	f("url", "-decode", "d0=ftp://x/metrics")
	f("-seq-len is required", "-prefill", "http://127.0.0.1:1/metrics", "-model-config", "x.json")
	f("flag provided but not defined", "-bogus")
	missing := filepath.Join(dir, "nope.json")
	f(missing, "-prefill", "http://127.0.0.1:1/metrics", "-model-config", missing, "-seq-len", "8192")
}

func TestUnknownCommand(t *testing.T) {
	code, _, errs := runCmd("frobnicate")
	if code != 2 || !strings.Contains(errs, "unknown command") || !strings.Contains(errs, "see ptdmon -h") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func TestServeBRequestFromModelConfig(t *testing.T) {
	// Llama-3.1-70B, S=8192, bf16: 80 layers × 8 KV heads × 128 × 2 (K,V) × 2 B × 8192.
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "ptdmon.yaml")
	model := filepath.Join("..", "..", "internal", "kvsize", "testdata", "llama-3.1-70b", "config.json")
	os.WriteFile(cfgPath, []byte("targets: [{url: 'http://127.0.0.1:1/metrics', role: prefill}]\nmodel:\n  config: "+model+"\n  seq_len: 8192\n  kv_dtype: bf16\n"), 0o644)
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	kv, err := bRequest(cfg, "config")
	if err != nil {
		t.Fatal(err)
	}
	if kv.Bytes != 80*8*128*2*2*8192 || kv.Basis != "model-config" || kv.Detail == nil {
		t.Errorf("B_request = %v from %q (detail %v), want 2684354560 from model-config", kv.Bytes, kv.Basis, kv.Detail != nil)
	}
	cfg.Model.Config = filepath.Join(dir, "missing.json")
	if _, err := bRequest(cfg, "config"); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing model config: %v", err)
	}
}
