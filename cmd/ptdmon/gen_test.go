package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func runGenCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = dispatch(append([]string{"gen"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func TestGenExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "ptdmon.yaml")
	os.WriteFile(good, []byte("kv_bytes_per_request: 4096\nwindow: 10s\ntargets:\n  - {name: p0, url: \"http://127.0.0.1:8000/metrics\", role: prefill, engine: vllm}\n  - {name: t0, url: \"http://127.0.0.1:8001\", role: decode, engine: trtllm}\n"), 0o644)
	pools := filepath.Join(dir, "pools.yaml")
	os.WriteFile(pools, []byte("pools:\n  chat: {kv_bytes_per_request: 8192}\ntargets:\n  - {name: p0, url: \"http://127.0.0.1:8000/metrics\", role: prefill, engine: vllm, pool: chat}\n"), 0o644)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("targets:\n  - {name: p0, url: \"http://h:1\", role: middle}\n"), 0o644)
	tests := []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"no artifact", nil, 2, "missing artifact"},
		{"unknown artifact", []string{"helm"}, 2, "unknown artifact"},
		{"rules to stdout", []string{"rules"}, 0, "record: stage:ptd_requests:rate5s"},
		{"rules window from config", []string{"rules", "-config", good}, 0, "vector(4096)"},
		{"rules pool B_request", []string{"rules", "-config", pools}, 0, "expr: vector(8192)\n        labels:\n          path: engines\n          pool: chat"},
		{"rules window flag", []string{"rules", "-window", "20s"}, 0, "stage:ptd_requests:rate20s"},
		{"prometheus", []string{"prometheus", "-config", good, "-ptdmon", "10.1.1.1:9433"}, 0, "10.1.1.1:9433"},
		{"prometheus trtllm", []string{"prometheus", "-config", good}, 0, "/prometheus/metrics"},
		{"bad role", []string{"rules", "-config", bad}, 2, "role"},
		{"missing config", []string{"rules", "-config", filepath.Join(dir, "nope.yaml")}, 2, "read config"},
		{"extra argument", []string{"rules", "x"}, 2, "unexpected argument"},
		{"grafana to stdout", []string{"grafana", "-out", "-"}, 2, "directory"},
		{"slo rules", []string{"slo", "-ttft", "0.5", "-e2e", "10"}, 0, "record: role:ptd_slo_attainment:ratio_rate1m"},
		{"slo window", []string{"slo", "-itl", "0.05", "-e2e", "10", "-slo-window", "5m"}, 0, "model:ptd_slo_goodput_independent:rate5m"},
		{"slo without threshold", []string{"slo"}, 2, "no threshold"},
		{"slo negative", []string{"slo", "-ttft", "-1"}, 2, "finite value > 0"},
		// gen slo neither lists nor takes the configuration's flags.
		{"slo with config", []string{"slo", "-e2e", "10", "-config", good}, 2, "not defined: -config"},
		{"slo as serve names it", []string{"slo", "-slo-ttft", "0.5", "-slo-e2e", "10"}, 0, "record: role:ptd_slo_attainment:ratio_rate1m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runGenCmd(t, tt.args...)
			if code != tt.code || !strings.Contains(out+errs, tt.contains) {
				t.Errorf("exit %d (want %d), output lacks %q:\n%s%s", code, tt.code, tt.contains, out, errs)
			}
		})
	}
}

// TestGenComposeMatchesDeploy: `ptdmon gen compose` without a config
// regenerates the checked-in deploy/ tree exactly.
func TestGenComposeMatchesDeploy(t *testing.T) {
	// A source tree holding deploy/ gives the checked-in build paths.
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "go.mod"), []byte("module github.com/ptdmon/ptdmon\n"), 0o644)
	dir := filepath.Join(src, "deploy")
	if code, _, errs := runGenCmd(t, "compose", "-out", dir, "-src", src); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	n := 0
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		got, _ := os.ReadFile(p)
		want, err := os.ReadFile(filepath.Join("..", "..", "deploy", rel))
		if err != nil {
			t.Errorf("deploy/%s: %v", rel, err)
			return nil
		}
		if !bytes.Equal(got, want) {
			t.Errorf("deploy/%s differs from `ptdmon gen compose` (go test ./internal/gen -update-deploy)", rel)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Errorf("only %d files generated", n)
	}
}

// TestGenComposeWherever: without -out, compose goes to a new
// ./ptdmon-compose; a second run refuses to overwrite it without -force;
// the compose file's build context and Dockerfile resolve from where the
// files were written.
func TestGenComposeWherever(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	if code, _, errs := runGenCmd(t, "compose"); code != 2 || !strings.Contains(errs, "-src") {
		t.Errorf("outside a source tree without -src: exit %d, %q; want 2 and a hint at -src", code, errs)
	}
	if code, _, errs := runGenCmd(t, "compose", "-src", repo); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	compose, err := os.ReadFile(filepath.Join("ptdmon-compose", "compose", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services map[string]struct {
			Build struct{ Context, Dockerfile string }
		}
	}
	if err := yaml.Unmarshal(compose, &doc); err != nil {
		t.Fatal(err)
	}
	b := doc.Services["ptdmon"].Build
	ctxDir, _ := filepath.Abs(filepath.Join("ptdmon-compose", "compose", b.Context))
	if ctxDir != repo {
		t.Errorf("build context %q resolves to %s, want %s", b.Context, ctxDir, repo)
	}
	if _, err := os.Stat(filepath.Join(ctxDir, b.Dockerfile)); err != nil {
		t.Errorf("dockerfile %q from the context: %v", b.Dockerfile, err)
	}
	if _, err := os.Stat(filepath.Join(ctxDir, "go.mod")); err != nil {
		t.Errorf("the build context has no go.mod: %v", err)
	}
	// Targets on the loopback address: written, with a warning naming them.
	os.WriteFile("lo.yaml", []byte("kv_bytes_per_request: 4096\ntargets:\n  - {name: p0, url: \"http://127.0.0.1:8000/metrics\", role: prefill, engine: vllm}\n  - {name: d0, url: \"http://localhost:8001/metrics\", role: decode, engine: vllm}\n  - {name: d1, url: \"http://10.0.0.7:8001/metrics\", role: decode, engine: vllm}\n"), 0o644)
	code, _, errs := runGenCmd(t, "compose", "-src", repo, "-config", "lo.yaml", "-out", "lo")
	if code != 0 || !strings.Contains(errs, "warning: 2 target(s) on the loopback address") ||
		!strings.Contains(errs, "p0 (http://127.0.0.1:8000/metrics), d0 (http://localhost:8001/metrics)") || strings.Contains(errs, "d1") {
		t.Errorf("loopback targets: exit %d, stderr %q; want 0 and a warning naming p0 and d0 only", code, errs)
	}
	code, out, errs := runGenCmd(t, "compose", "-src", repo)
	if code != 2 || !strings.Contains(errs, "exists: pass -force") || out != "" {
		t.Errorf("second run: exit %d, stdout %q, stderr %q; want 2, nothing written", code, out, errs)
	}
	if code, _, errs := runGenCmd(t, "compose", "-src", repo, "-force"); code != 0 {
		t.Errorf("-force: exit %d: %s", code, errs)
	}
}

// TestGenSLOHelpListsWhatItTakes: gen slo -h lists no flag it refuses,
// and the thresholds under the names serve and demo use.
func TestGenSLOHelpListsWhatItTakes(t *testing.T) {
	code, out, _ := runGenCmd(t, "slo", "-h")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, no := range []string{"  -config", "  -window ", "  -kv-bytes-per-request"} {
		if strings.Contains(out, no) {
			t.Errorf("gen slo -h lists %s, which it refuses:\n%s", no, out)
		}
	}
	for _, want := range []string{"-slo-ttft", "-slo-itl", "-slo-e2e", "-out", "-o "} {
		if !strings.Contains(out, want) {
			t.Errorf("gen slo -h lacks %s:\n%s", want, out)
		}
	}
}
