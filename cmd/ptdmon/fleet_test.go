package main

import (
	"strings"
	"testing"
)

// TestServeFleetFlagErrors: -source and -shard mistakes exit 2 with a clear
// message before anything starts.
func TestServeFleetFlagErrors(t *testing.T) {
	f := func(wantErr string, args ...string) {
		t.Helper()
		code, _, errs := runCmd(append([]string{"serve"}, args...)...)
		if code != 2 || !strings.Contains(errs, wantErr) {
			t.Errorf("serve %v: exit %d, stderr %q; want exit 2 and %q", args, code, errs, wantErr)
		}
	}
	f("want prometheus=URL", "-source", "http://prometheus:9090")
	f("want prometheus=http(s)://", "-source", "prometheus=prometheus:9090")
	f("remove targets, file_sd and kubernetes_sd, or source", "-source", "prometheus=http://p:9090", "-prefill", "http://127.0.0.1:1/metrics")
	f("want i/N", "-prefill", "http://127.0.0.1:1/metrics", "-shard", "2/2")
	f("want i/N", "-prefill", "http://127.0.0.1:1/metrics", "-shard", "1")
}
