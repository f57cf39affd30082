package config

import (
	"flag"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFlagsOverFile: a flag given sets its field over the file's value; a
// flag not given, or a string or count left empty or zero, keeps the
// file's; a duration or threshold given is validated and named by its flag.
func TestFlagsOverFile(t *testing.T) {
	const file = "interval: 2s\nwindow: 10s\nkv_source: nixl\nkv_bytes_per_request: 7\nallowed_hosts: [a]\nheadroom: 0.3\n" +
		"slo: {ttft: 0.5}\nmodel: {config: m.json, seq_len: 100}\ntargets: [{name: f, url: 'http://f:1/m', role: decode}]\n"
	parse := func(t *testing.T, args ...string) (*Config, *Flags) {
		t.Helper()
		c, err := Parse([]byte(file), "ptdmon.yaml")
		if err != nil {
			t.Fatal(err)
		}
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fl := NewFlags(fs)
		fl.Duration("interval", "interval", "", func(c *Config) *Duration { return &c.Interval })
		fl.Duration("window", "window", "", func(c *Config) *Duration { return &c.Window })
		fl.String("kv-source", "", func(c *Config) *string { return &c.KVSource })
		fl.Int64("kv-bytes-per-request", "", func(c *Config) *int64 { return &c.KVBytesPerRequest })
		fl.Int("seq-len", "", func(c *Config) *int { return &c.Model.SeqLen })
		fl.List("allowed-hosts", "", func(c *Config) *[]string { return &c.AllowedHosts })
		fl.Float64("slo-ttft", "slo.ttft", "", func(c *Config) *float64 { return &c.SLO.TTFT })
		fl.OptionalFloat64("headroom", "headroom", "", func(c *Config) **float64 { return &c.Headroom })
		var urls []string
		fs.Func("prefill", "", func(s string) error { urls = append(urls, s); return nil })
		fl.Bind("prefill", func(c *Config) {
			for _, u := range urls {
				c.Targets = append(c.Targets, TargetFlag("prefill", u))
			}
		})
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		fl.Apply(c)
		c.SetDefaults()
		return c, fl
	}

	c, fl := parse(t)
	if c.Interval.Duration != 2*time.Second || c.KVSource != "nixl" || c.KVBytesPerRequest != 7 || *c.Headroom != 0.3 ||
		c.SLO.TTFT != 0.5 || len(c.Targets) != 1 || fl.Given("interval") {
		t.Errorf("no flags: %+v, want the file's values", c)
	}

	c, fl = parse(t, "-interval", "500ms", "-kv-source", "flagcx", "-kv-bytes-per-request", "9", "-seq-len", "200",
		"-allowed-hosts", "x,y:1", "-slo-ttft", "0.25", "-headroom", "0", "-prefill", "p=http://p:1/m")
	if c.Interval.Duration != 500*time.Millisecond || c.Window.Duration != 10*time.Second || c.KVSource != "flagcx" ||
		c.KVBytesPerRequest != 9 || c.Model.SeqLen != 200 || c.Model.Config != "m.json" || !slices.Equal(c.AllowedHosts, []string{"x", "y:1"}) ||
		c.SLO.TTFT != 0.25 || c.Headroom == nil || *c.Headroom != 0 || !fl.Given("interval") || fl.Given("window") {
		t.Errorf("flags: %+v", c)
	}
	if len(c.Targets) != 2 || c.Targets[0].Name != "f" || c.Targets[1].Name != "p" || c.Targets[1].Role != "prefill" {
		t.Errorf("targets %+v, want the file's, then -prefill's", c.Targets)
	}
	// An explicit timeout is now derived from the flag's interval.
	if c.Timeout.Duration != 400*time.Millisecond {
		t.Errorf("timeout %s, want 4/5 of -interval", c.Timeout)
	}

	// Empty strings and zero counts keep the file's value.
	c, _ = parse(t, "-kv-source", "", "-kv-bytes-per-request", "0", "-allowed-hosts", "")
	if c.KVSource != "nixl" || c.KVBytesPerRequest != 7 || !slices.Equal(c.AllowedHosts, []string{"a"}) {
		t.Errorf("empty flags: %+v, want the file's values", c)
	}

	// A zero or negative duration given is refused, naming the flag.
	c, _ = parse(t, "-window", "0s", "-slo-ttft", "-1")
	err := c.Validate()
	for _, want := range []string{"-window: window 0s must be > 0", "-slo-ttft: slo.ttft -1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
}
