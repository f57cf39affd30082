package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ptdmon/ptdmon/internal/testutil"
)

type simConfigOut struct {
	KVBytesPerRequest int64 `yaml:"kv_bytes_per_request"`
	Targets           []struct {
		Name, URL, Role, Engine string
	} `yaml:"targets"`
}

// syncBuffer lets the test read stdout while runSim writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestRunSimServesAndPrintsConfig(t *testing.T) {
	var stdout, stderr syncBuffer
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "ptdmon.yaml")
	done := make(chan int, 1)
	go func() {
		done <- runSim([]string{"-scenario", "kv-bound", "-seed", "3", "-duration", "3s",
			"-kv-bytes-per-request", "536870912", "-prefill", "1", "-config-out", cfgPath}, &stdout, &stderr)
	}()
	// Wait for the printed config (bounded), then scrape while it runs.
	testutil.Eventually(t, 2*time.Second, 5*time.Millisecond, func() (bool, string) {
		return strings.Contains(stdout.String(), "scrape_configs:"), "no config printed; stderr: " + stderr.String()
	})
	dec := yaml.NewDecoder(strings.NewReader(stdout.String()))
	var cfg simConfigOut
	if err := dec.Decode(&cfg); err != nil {
		t.Fatal(err)
	}
	var prom struct {
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string          `yaml:"targets"`
				Labels  map[string]string `yaml:"labels"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := dec.Decode(&prom); err != nil {
		t.Fatalf("second YAML document: %v", err)
	}
	if cfg.KVBytesPerRequest != 536870912 {
		t.Fatalf("kv_bytes_per_request = %d", cfg.KVBytesPerRequest)
	}
	// -prefill 1: one prefill per group (vllm, sglang) plus 2+1 decode.
	if len(cfg.Targets) != 5 || len(prom.ScrapeConfigs) != 2 || len(prom.ScrapeConfigs[1].StaticConfigs) != 5 {
		t.Fatalf("targets: %+v / %+v", cfg.Targets, prom)
	}
	for _, tg := range cfg.Targets {
		if tg.Role != "prefill" && tg.Role != "decode" || tg.Engine == "" || !strings.HasPrefix(tg.URL, "http://127.0.0.1:") {
			t.Fatalf("bad target %+v", tg)
		}
	}
	resp, err := http.Get(cfg.Targets[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(body, []byte("vllm:flagcx_total_bytes_transferred_total")) {
		t.Fatalf("unexpected body:\n%.300s", body)
	}
	written, err := os.ReadFile(cfgPath)
	if err != nil || !strings.HasPrefix(stdout.String(), string(written)) {
		t.Fatalf("-config-out differs from stdout: %v", err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d; stderr %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("-duration did not stop the simulator")
	}
	if _, err := http.Get(cfg.Targets[0].URL); err == nil {
		t.Fatal("still serving after exit")
	}
}

func TestRunSimUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("model: x\nbogus_key: 1\n"), 0o644)
	cases := [][]string{
		{"-scenario", "nope"},
		{"-no-such-flag"},
		{"extra-arg"},
		{"-scenario-file", bad},
		{"-rate", "-1"},
		{"-vllm-connector", "tcp"},
		{"-speed", "0"},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := runSim(args, &stdout, &stderr); code != 2 {
				t.Errorf("exit %d, want 2 (stderr %s)", code, stderr.String())
			}
		})
	}
	var stdout, stderr bytes.Buffer
	runSim([]string{"-scenario-file", bad}, &stdout, &stderr)
	if !strings.Contains(stderr.String(), "bad.yaml:2:") {
		t.Errorf("scenario file error lacks file:line: %s", stderr.String())
	}
	sc := bufio.NewScanner(&stdout)
	if sc.Scan() {
		t.Errorf("usage error printed a config: %q", sc.Text())
	}
}
