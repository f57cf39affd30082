package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordingLeftOut: in a build that leaves recording out, every way to
// ask for a recording is one line saying so and exit 2, and nothing is
// written; what needs no recording still runs.
func TestRecordingLeftOut(t *testing.T) {
	recordingIncluded = false
	// Should a command start anyway, it stops at once and the test fails
	// on its exit code rather than waiting.
	old := serveContext
	serveContext = func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, cancel
	}
	t.Cleanup(func() { recordingIncluded, serveContext = true, old })
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "run")
	cfg := filepath.Join(tmp, "ptdmon.yaml")
	yaml := "targets:\n  - name: p\n    role: prefill\n    url: http://127.0.0.1:1/metrics\nrecord:\n  dir: " + dir + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"serve", "-record", dir, "-prefill", "http://127.0.0.1:1/metrics", "-listen", "127.0.0.1:0"},
		{"serve", "-config", cfg, "-listen", "127.0.0.1:0"},
		{"demo", "-record", dir, "-listen", "127.0.0.1:0", "-duration", "1ms"},
		{"record", "-o", dir, "-prefill", "http://127.0.0.1:1/metrics", "-settle", "0", "--", "true"},
		{"replay", dir},
		{"report", tmp},
	} {
		code, out, errs := runCmd(args...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "leaves recording out (-tags norecord)") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line saying recording is left out", args, code, out, errs)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s: %v; want nothing written", dir, err)
	}
	if code, _, errs := runCmd("report", "-h"); code != 0 || errs != "" {
		t.Errorf("report -h: exit %d, stderr %q", code, errs)
	}
}

// TestLeanBuild: -tags norecord compiles, and its binary links neither the
// TSDB nor what Prometheus's configuration brings (the cloud SDKs); the
// default build has the TSDB. The bounds are docs/performance.md's
// measurement with some room.
func TestLeanBuild(t *testing.T) {
	t.Parallel() // the go command in processes of its own
	if testing.Short() {
		t.Skip("runs the go command")
	}
	if out, err := exec.Command("go", "build", "-tags", "norecord", ".", "../../internal/record").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags norecord: %v\n%s", err, out)
	}
	deps := func(tags string) []string {
		out, err := exec.Command("go", "list", "-deps", "-tags", tags, ".").Output()
		if err != nil {
			t.Fatalf("go list -deps -tags %q: %v", tags, err)
		}
		return strings.Fields(string(out))
	}
	full, lean := deps(""), deps("norecord")
	has := func(pkgs []string, prefix string) string {
		for _, p := range pkgs {
			if p == prefix || strings.HasPrefix(p, prefix+"/") {
				return p
			}
		}
		return ""
	}
	if has(full, "github.com/prometheus/prometheus/tsdb") == "" {
		t.Errorf("the default build has no TSDB (%d packages)", len(full))
	}
	for _, prefix := range []string{
		"github.com/prometheus/prometheus/tsdb", "github.com/prometheus/prometheus/storage",
		"github.com/prometheus/prometheus/config", "github.com/aws", "github.com/Azure",
		"cloud.google.com", "google.golang.org/api", "github.com/stretchr/testify", "k8s.io/client-go",
	} {
		if p := has(lean, prefix); p != "" {
			t.Errorf("-tags norecord links %s", p)
		}
	}
	if len(lean) > 500 || len(full)-len(lean) < 250 {
		t.Errorf("-tags norecord: %d packages, the default build %d; want at most 500 and 250 fewer", len(lean), len(full))
	}
}
