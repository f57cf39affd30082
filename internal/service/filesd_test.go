package service

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// TestFileSDIsReRead: targets come from a Prometheus file_sd file; when the
// file changes the new set is scraped, and a broken rewrite keeps the old set.
func TestFileSDIsReRead(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 4 s of real time")
	}
	a := startFake(t, 0, 11, vllmBody("llama", 1, 10, "flagcx", bReq))
	b := startFake(t, 0, 12, sglangBody("decode", "qwen", 10, 0))
	dir := t.TempDir()
	sd := filepath.Join(dir, "engines.json")
	write := func(body string) {
		t.Helper()
		tmp := sd + ".tmp"
		if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, sd); err != nil {
			t.Fatal(err)
		}
	}
	host := func(u string) string { return strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/metrics") }
	write(`[{"targets": ["` + host(a.URL()) + `"], "labels": {"ptd_role": "prefill", "ptd_name": "a"}}]`)
	cfg := &config.Config{
		Interval: config.Duration{Duration: 250 * time.Millisecond},
		Window:   config.Duration{Duration: time.Second},
		FileSD:   []config.FileSDEntry{{Files: []string{filepath.Join(dir, "*.json")}, Refresh: config.Duration{Duration: 200 * time.Millisecond}}},
	}
	rs := startService(t, cfg, ledger.KVRequest{})
	names := func() []string {
		var ts []targetJSON
		getJSON(t, rs.base+"/api/v1/targets", &ts)
		var out []string
		for _, tg := range ts {
			out = append(out, tg.Name)
		}
		return out
	}
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Second)
		for {
			got := strings.Join(names(), ",")
			if got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("targets %q, want %q", got, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("a")
	// mtime granularity: make sure the rewrite is seen as a change.
	time.Sleep(20 * time.Millisecond)
	write(`[{"targets": ["` + host(a.URL()) + `"], "labels": {"ptd_role": "prefill", "ptd_name": "a"}},
 {"targets": ["` + host(b.URL()) + `"], "labels": {"ptd_name": "b"}}]`)
	waitFor("a,b")
	write(`[{"targets": [`)
	time.Sleep(600 * time.Millisecond)
	if got := strings.Join(names(), ","); got != "a,b" {
		t.Errorf("after a broken rewrite targets are %q, want the previous a,b", got)
	}
}
