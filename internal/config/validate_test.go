package config

import (
	"flag"
	"strings"
	"testing"
)

// Every duration, size and count given is validated where it was given;
// none is replaced by a default.
func TestGivenValuesAreValidatedNotReplaced(t *testing.T) {
	const tg = "targets: [{url: 'http://a:1/m'}]\n"
	f := func(yaml, want string) {
		t.Helper()
		c, err := Parse([]byte(yaml+tg), "ptdmon.yaml")
		if err != nil {
			t.Fatal(err)
		}
		c.SetDefaults()
		err = c.Validate()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", yaml, err, want)
		}
	}
	f("interval: 0s\n", "ptdmon.yaml:1: interval 0s must be > 0")
	if c, _ := Parse([]byte("interval: 0s\n"+tg), "ptdmon.yaml"); c != nil {
		c.SetDefaults()
		if err := c.Validate(); err == nil || strings.Count(err.Error(), "\n") != 0 {
			t.Errorf("interval 0s: want one error, got %v", err)
		}
	}
	f("interval: -1s\n", "ptdmon.yaml:1: interval -1s must be > 0")
	f("window: 10s\ntimeout: -1s\n", "ptdmon.yaml:2: timeout -1s must be > 0")
	f("timeout: 0s\n", "ptdmon.yaml:1: timeout 0s must be > 0")
	f("history: -1h\n", "ptdmon.yaml:1: history -1h0m0s must be > 0")
	f("history: 0s\n", "ptdmon.yaml:1: history 0s must be > 0")
	f("max_body_bytes: -5\n", "ptdmon.yaml:1: max_body_bytes -5 must be > 0")
	f("max_body_bytes: 0\n", "ptdmon.yaml:1: max_body_bytes 0 must be > 0")
	f("body_budget_bytes: -1\n", "ptdmon.yaml:1: body_budget_bytes -1 must be > 0")
	f("max_series_per_target: 0\n", "ptdmon.yaml:1: max_series_per_target 0 must be > 0")
	f("window: 0s\n", "ptdmon.yaml:1: window 0s must be > 0")
	f("interval: 2s\nhistory: 1s\n", "ptdmon.yaml:2: history 1s is shorter than one interval")
	f("file_sd: [{files: [x.json], refresh_interval: -5s}]\n", "ptdmon.yaml:1: file_sd entry 1: refresh_interval -5s")
	f("file_sd: [{files: [x.json], refresh_interval: 0s}]\n", "refresh_interval 0s must be > 0")
	f("allowed_hosts: ['a b']\n", "ptdmon.yaml:1: allowed_hosts entry")

	// From flags: named by the flag.
	c := &Config{Targets: []Target{{Name: "a", URL: "http://a:1/m"}}}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fl := NewFlags(fs)
	fl.Duration("timeout", "timeout", "", func(c *Config) *Duration { return &c.Timeout })
	if err := fs.Parse([]string{"-timeout", "-1s"}); err != nil {
		t.Fatal(err)
	}
	fl.Apply(c)
	c.SetDefaults()
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "-timeout: timeout -1s must be > 0") {
		t.Errorf("negative -timeout: %v", err)
	}
	// Not given: defaults.
	c = &Config{Targets: []Target{{Name: "a", URL: "http://a:1/m"}}}
	c.SetDefaults()
	if err := c.Validate(); err != nil || c.Interval.Duration != DefaultInterval || c.MaxBodyBytes != 64<<20 || c.History.Duration != DefaultHistory {
		t.Errorf("defaults: %v %+v", err, c)
	}
}

func TestPasswordsAreNotShownInErrors(t *testing.T) {
	c := &Config{Targets: []Target{
		TargetFlag("prefill", "p0=http://admin:pa55word@h:1/metrics"),
		TargetFlag("prefill", "p0=ftp://admin:pa55word@h:1/metrics"),
	}}
	c.SetDefaults()
	err := c.Validate()
	if err == nil || strings.Contains(err.Error(), "pa55word") || !strings.Contains(err.Error(), "admin:xxxxx@") {
		t.Errorf("error %v", err)
	}
}
