package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestOTLP(t *testing.T) {
	f := func(yaml, wantErr string, want OTLP) {
		t.Helper()
		c, err := Parse([]byte("targets: [{url: 'http://a:1/metrics'}]\n"+yaml), "ptdmon.yaml")
		if err == nil {
			c.SetDefaults()
			err = c.Validate()
		}
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("%q: error %v, want %q", yaml, err, wantErr)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: %v", yaml, err)
		}
		if !reflect.DeepEqual(c.OTLP, want) {
			t.Errorf("%q: %+v, want %+v", yaml, c.OTLP, want)
		}
	}
	f("", "", OTLP{MaxBytes: DefaultOTLPMaxBytes, MaxSpans: DefaultOTLPMaxSpans})
	f("otlp: {listen: ':4317', forward: 'http://tempo:4318/v1/traces', max_bytes: 1024, max_spans: 10}\n", "",
		OTLP{Listen: ":4317", Forward: "http://tempo:4318/v1/traces", MaxBytes: 1024, MaxSpans: 10})
	f("otlp: {listen: '4317'}\n", `ptdmon.yaml:2: otlp.listen "4317": want host:port`, OTLP{})
	f("otlp: {listen: ':4317', forward: 'tempo:4318'}\n", "ptdmon.yaml:2: otlp.forward", OTLP{})
	f("otlp: {forward: 'http://tempo:4318/v1/traces'}\n", "otlp.forward needs otlp.listen", OTLP{})
	f("otlp: {listen: ':4317', max_spans: -1}\n", "otlp.max_spans -1 must be > 0", OTLP{})
	f("otlp: {listne: ':4317'}\n", "field listne not found", OTLP{})
	f("otlp: {trtllm_perf_metrics: [{url: 'http://disagg:8000/perf_metrics', pool: llama}]}\n", "",
		OTLP{MaxBytes: DefaultOTLPMaxBytes, MaxSpans: DefaultOTLPMaxSpans,
			PerfMetrics: []PerfMetricsSource{{URL: "http://disagg:8000/perf_metrics", Pool: "llama"}}})
	f("otlp: {trtllm_perf_metrics: [{url: 'disagg:8000'}]}\n", "otlp.trtllm_perf_metrics[0].url", OTLP{})
	f("otlp: {trtllm_perf_metrics: [{files: '/var/log/trt/perf_metrics-disagg-*.jsonl'}]}\n", "",
		OTLP{MaxBytes: DefaultOTLPMaxBytes, MaxSpans: DefaultOTLPMaxSpans,
			PerfMetrics: []PerfMetricsSource{{Files: "/var/log/trt/perf_metrics-disagg-*.jsonl"}}})
	f("otlp: {trtllm_perf_metrics: [{files: 'a[', url: 'http://a/perf_metrics'}]}\n", "want url or files, one of them", OTLP{})
	f("otlp: {trtllm_perf_metrics: [{files: 'a['}]}\n", "otlp.trtllm_perf_metrics[0].files", OTLP{})
}
