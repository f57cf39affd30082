package main

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
)

// TestTargetAndModelFlags: the flags serve and record share bind each
// target to its role, in order, set the interval, and refuse -model-config
// without -seq-len.
func TestTargetAndModelFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fl := config.NewFlags(fs)
	targetFlags(fs, fl)
	model := modelFlags(fl, "")
	err := fs.Parse([]string{"-decode", "d0=http://b:1/metrics", "-prefill", "http://a:1/metrics", "-decode", "http://c:1/metrics",
		"-interval", "2s", "-model-config", "config.json"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{}
	fl.Apply(cfg)
	var got []string
	for _, tg := range cfg.Targets {
		got = append(got, tg.Role+" "+tg.URL)
	}
	want := "prefill http://a:1/metrics, decode http://b:1/metrics, decode http://c:1/metrics"
	if strings.Join(got, ", ") != want {
		t.Errorf("targets %q, want %q", got, want)
	}
	if cfg.Targets[1].Name != "d0" {
		t.Errorf("a named target is called %q", cfg.Targets[1].Name)
	}
	if cfg.Interval.Duration != 2*time.Second {
		t.Errorf("interval %v, want 2s", cfg.Interval)
	}
	if model.kvGiven() {
		t.Error("-kv-bytes-per-request counts as given")
	}
	if err := model.check(); err == nil || !strings.Contains(err.Error(), "-seq-len is required with -model-config") {
		t.Errorf("-model-config without -seq-len: %v", err)
	}
	if err := fs.Set("seq-len", "8192"); err != nil {
		t.Fatal(err)
	}
	if err := model.check(); err != nil {
		t.Errorf("-model-config with -seq-len: %v", err)
	}
}
