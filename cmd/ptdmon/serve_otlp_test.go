package main

import (
	"net"
	"strings"
	"testing"
)

func TestServeOTLPFlagErrors(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	f := func(wantErr string, args ...string) {
		t.Helper()
		args = append([]string{"serve", "-listen", "127.0.0.1:0", "-prefill", "http://127.0.0.1:1/metrics"}, args...)
		code, _, errs := runCmd(args...)
		if code != 2 || !strings.Contains(errs, wantErr) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", args, code, errs, wantErr)
		}
	}
	f(`invalid value "4317" for flag -otlp.listen`, "-otlp.listen", "4317")
	f("otlp.forward", "-otlp.listen", "127.0.0.1:0", "-otlp.forward", "tempo:4318")
	f("otlp.forward needs otlp.listen", "-otlp.forward", "http://tempo:4318/v1/traces")
	f("otlp.max_spans -5 must be > 0", "-otlp.listen", "127.0.0.1:0", "-otlp.max-spans", "-5")
	f("listen for OTLP on "+taken.Addr().String(), "-otlp.listen", taken.Addr().String())
}
