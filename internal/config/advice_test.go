package config

import (
	"flag"
	"strings"
	"testing"
)

// SLO thresholds and the headroom: read from the file, refused with the
// file and line of the bad key, and settable from flags.
func TestAdviceSettings(t *testing.T) {
	const tg = "targets: [{url: 'http://a:1/m'}]\n"
	load := func(yaml string) (*Config, error) {
		c, err := Parse([]byte(yaml+tg), "ptdmon.yaml")
		if err != nil {
			return nil, err
		}
		c.SetDefaults()
		return c, c.Validate()
	}
	c, err := load("slo:\n  ttft: 0.5\n  itl: 0.05\n  e2e: 10\nheadroom: 0.25\n")
	if err != nil || c.SLO.TTFT != 0.5 || c.SLO.ITL != 0.05 || c.SLO.E2E != 10 || c.Headroom == nil || *c.Headroom != 0.25 {
		t.Fatalf("%v: %+v", err, c)
	}
	if c, err := load(""); err != nil || c.Headroom != nil || c.SLO.TTFT != 0 {
		t.Errorf("unset: %v %+v", err, c)
	}
	f := func(yaml, want string) {
		t.Helper()
		_, err := load(yaml)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", yaml, err, want)
		}
	}
	f("slo:\n  ttft: 0.5\n  e2e: -1\n", "ptdmon.yaml:3: slo.e2e -1: want a threshold in seconds ≥ 0")
	f("slo:\n  itl: .nan\n", "ptdmon.yaml:2: slo.itl NaN")
	f("slo:\n  ttft: fast\n", "ptdmon.yaml:2: slo.ttft \"fast\": want seconds (0.5) or a duration (500ms)")
	f("slo:\n  tpot: 0.05\n", "ptdmon.yaml:2: slo.tpot: unknown key (want ttft, itl or e2e)")
	// A duration reads as the seconds it is.
	if c, err := load("slo:\n  ttft: 500ms\n  e2e: 1m\n"); err != nil || c.SLO.TTFT != 0.5 || c.SLO.E2E != 60 {
		t.Errorf("slo as durations: %v %+v", err, c)
	}
	f("headroom: 1\n", "ptdmon.yaml:1: headroom 1: want 0 ≤ headroom < 1")
	f("headroom: -0.1\n", "ptdmon.yaml:1: headroom -0.1")

	c = &Config{Targets: []Target{{Name: "a", URL: "http://a:1/m"}}}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fl := NewFlags(fs)
	fl.Float64("slo-itl", "slo.itl", "", func(c *Config) *float64 { return &c.SLO.ITL })
	fl.OptionalFloat64("headroom", "headroom", "", func(c *Config) **float64 { return &c.Headroom })
	if err := fs.Parse([]string{"-slo-itl", "-2", "-headroom", "1.5"}); err != nil {
		t.Fatal(err)
	}
	fl.Apply(c)
	c.SetDefaults()
	err = c.Validate()
	for _, want := range []string{"-slo-itl: slo.itl -2", "-headroom: headroom 1.5"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("flags: error %v, want %q", err, want)
		}
	}
}

// TestUnknownTopKey: a typo at the top level names the key and the keys
// the file takes, not a Go type.
func TestUnknownTopKey(t *testing.T) {
	_, err := Parse([]byte("listen: 127.0.0.1:9433\nlisen: x\n"), "ptdmon.yaml")
	if err == nil || !strings.Contains(err.Error(), "ptdmon.yaml:2: unknown key lisen (want one of listen, interval,") || strings.Contains(err.Error(), "config.Config") {
		t.Errorf("error %v", err)
	}
}
