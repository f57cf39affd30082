package config

import (
	"strings"
	"testing"
)

func TestSourceAndShardValidation(t *testing.T) {
	f := func(yaml, wantErr string) {
		t.Helper()
		c, err := Parse([]byte(yaml), "ptdmon.yaml")
		if err != nil {
			t.Fatalf("parse %q: %v", yaml, err)
		}
		c.SetDefaults()
		err = c.Validate()
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%q: %v", yaml, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%q: error %v, want one containing %q", yaml, err, wantErr)
		}
	}
	f("source: prometheus=http://prom:9090\n", "")
	f("source: prometheus=http://mimir:8080/prometheus\nshard: 1/4\n", "")
	f("source: http://prom:9090\n", "want prometheus=URL")
	f("source: influx=http://x:1\n", "want prometheus=URL")
	f("source: prometheus=prom:9090\n", "want prometheus=http(s)://")
	f("source: prometheus=http://prom:9090\ntargets: [{url: 'http://a:1/metrics', role: prefill}]\n", "remove targets")
	f("targets: [{url: 'http://a:1/metrics', role: prefill}]\nshard: 2/2\n", "want i/N")
	f("targets: [{url: 'http://a:1/metrics', role: prefill}]\nshard: 0/2\n", "")
	f("interval: 1s\n", "no targets")
}
