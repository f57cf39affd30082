package service

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/kvsize"
)

// TestFileSDIsReRead: targets come from a Prometheus file_sd file; when the
// file changes the new set is scraped, and a broken rewrite keeps the old
// set. The re-reads run in fake time; each rewrite gets its own mtime, as
// the watcher compares them.
func TestFileSDIsReRead(t *testing.T) {
	synctest.Test(t, testFileSDIsReRead)
}

func testFileSDIsReRead(t *testing.T) {
	n := newMemNet()
	memFake(t, n, "a:8000", 0, 11, vllmBody("llama", 1, 10, "flagcx", bReq))
	memFake(t, n, "b:30000", 0, 12, sglangBody("decode", "qwen", 10, 0))
	dir := t.TempDir()
	sd := filepath.Join(dir, "engines.json")
	mtime := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write := func(body string) {
		t.Helper()
		tmp := sd + ".tmp"
		if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		mtime = mtime.Add(time.Second)
		if err := os.Chtimes(tmp, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, sd); err != nil {
			t.Fatal(err)
		}
	}
	write(`[{"targets": ["a:8000"], "labels": {"ptd_role": "prefill", "ptd_name": "a"}}]`)
	const refresh = 200 * time.Millisecond
	cfg := &config.Config{
		Interval: config.Duration{Duration: 250 * time.Millisecond},
		Window:   config.Duration{Duration: time.Second},
		FileSD:   []config.FileSDEntry{{Files: []string{filepath.Join(dir, "*.json")}, Refresh: config.Duration{Duration: refresh}}},
	}
	rs := startBubble(t, cfg, kvsize.Request{}, n)
	// targets returns the scraped targets' names, and which are up.
	targets := func() (names, up string) {
		var ts []targetJSON
		rs.getJSON(t, "/api/v1/targets", &ts)
		var all, ups []string
		for _, tg := range ts {
			all = append(all, tg.Name)
			if tg.Up {
				ups = append(ups, tg.Name)
			}
		}
		return strings.Join(all, ","), strings.Join(ups, ",")
	}
	// After one refresh period and one scrape interval the set is re-read
	// and each new target scraped once.
	settle := func() {
		time.Sleep(refresh + cfg.Interval.Duration)
		synctest.Wait()
	}
	settle()
	if names, up := targets(); names != "a" || up != "a" {
		t.Fatalf("targets %q, up %q; want a, a", names, up)
	}
	write(`[{"targets": ["a:8000"], "labels": {"ptd_role": "prefill", "ptd_name": "a"}},
 {"targets": ["b:30000"], "labels": {"ptd_name": "b"}}]`)
	settle()
	if names, up := targets(); names != "a,b" || up != "a,b" {
		t.Fatalf("after adding b: targets %q, up %q; want a,b both up", names, up)
	}
	write(`[{"targets": [`)
	settle()
	if names, _ := targets(); names != "a,b" {
		t.Errorf("after a broken rewrite targets are %q, want the previous a,b", names)
	}
	if !strings.Contains(rs.logs.String(), "file_sd targets refused") {
		t.Errorf("the broken rewrite is not logged:\n%s", rs.logs.String())
	}
	write(`[{"targets": ["b:30000"], "labels": {"ptd_name": "b"}}]`)
	settle()
	if names, _ := targets(); names != "b" {
		t.Errorf("after removing a: targets %q, want b", names)
	}
}
