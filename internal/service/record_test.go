package service

import (
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/config"
)

// Two rounds with the same settings hash alike wherever they are recorded
// and served; a setting that changes what is measured changes the hash,
// and run.json's text keeps everything as given.
func TestConfigHashIsOfTheSettings(t *testing.T) {
	const base = "interval: 1s\ntargets:\n  - {name: p0, url: 'http://127.0.0.1:8000/metrics', role: prefill, engine: vllm}\n  - {name: d0, url: 'http://127.0.0.1:8001/metrics', role: decode, engine: vllm}\n"
	hash := func(extra string) (string, string) {
		t.Helper()
		cfg, err := config.Parse([]byte(base+extra), "ptdmon.yaml")
		if err != nil {
			t.Fatal(err)
		}
		text, h, err := configText(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return text, h
	}
	_, plain := hash("")
	f := func(extra string, same bool) {
		t.Helper()
		text, h := hash(extra)
		if (h == plain) != same {
			t.Errorf("%q: hash %s, without it %s; want them equal: %v", extra, h, plain, same)
		}
		if len(text) == 0 {
			t.Errorf("%q: no configuration text", extra)
		}
	}
	f("record:\n  dir: /var/lib/ptdmon/round1\n", true)
	f("record:\n  dir: /var/lib/ptdmon/round2\n  retention: 48h\n", true)
	f("listen: 127.0.0.1:41234\n", true)
	f("allowed_hosts: [ptdmon.example]\n", true)
	f("window: 10s\n", false)
	f("kv_bytes_per_request: 1000000\n", false)
	text, _ := hash("record:\n  dir: /var/lib/ptdmon/round1\n")
	if !strings.Contains(text, "/var/lib/ptdmon/round1") {
		t.Errorf("run.json's configuration lost record.dir:\n%s", text)
	}
}
