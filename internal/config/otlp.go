package config

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
)

// OTLP configures the OpenTelemetry trace receiver of serve (docs/traces.md).
type OTLP struct {
	// Listen is host:port of OTLP over gRPC and HTTP; empty: no receiver.
	Listen string `yaml:"listen"`
	// Forward is an OTLP/HTTP traces URL that gets every accepted export.
	Forward string `yaml:"forward"`
	// MaxBytes bounds the bytes of the exports being read at once
	// (default 16 MiB); MaxSpans the spans the request ledger keeps, and
	// so the spans of one export (default 100,000).
	MaxBytes int64 `yaml:"max_bytes"`
	MaxSpans int   `yaml:"max_spans"`
	// PerfMetrics are TensorRT-LLM servers whose GET /perf_metrics feeds
	// the same request ledger (docs/traces.md#tensorrt-llms-per-request-records).
	PerfMetrics []PerfMetricsSource `yaml:"trtllm_perf_metrics"`
}

// PerfMetricsSource is one TensorRT-LLM server's per-request records.
type PerfMetricsSource struct {
	// URL is the server's /perf_metrics, e.g. http://disagg:8000/perf_metrics.
	URL string `yaml:"url"`
	// Files, instead of URL, is a glob of the JSONL files a current server
	// writes to its perf_metrics_output_dir.
	Files string `yaml:"files"`
	// Pool names the pool of its requests.
	Pool string `yaml:"pool"`
}

// Defaults of the OTLP receiver.
const (
	DefaultOTLPMaxBytes = 16 << 20
	DefaultOTLPMaxSpans = 100_000
)

func (o *OTLP) setDefaults() {
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultOTLPMaxBytes
	}
	if o.MaxSpans == 0 {
		o.MaxSpans = DefaultOTLPMaxSpans
	}
}

// validateOTLP checks the otlp section.
func (c *Config) validateOTLP(at func(string) string) []error {
	o := c.OTLP
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", at("otlp"), fmt.Sprintf(format, a...)))
	}
	if o.Listen != "" {
		_, port, err := net.SplitHostPort(o.Listen)
		if n, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil || (n == 0 && port != "0") {
			bad("otlp.listen %q: want host:port, e.g. 127.0.0.1:4317", o.Listen)
		}
	}
	if o.Forward != "" {
		u, err := url.Parse(o.Forward)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("otlp.forward %q: want an OTLP/HTTP traces URL, e.g. http://tempo:4318/v1/traces", o.Forward)
		}
		if o.Listen == "" {
			bad("otlp.forward needs otlp.listen")
		}
	}
	for i, p := range o.PerfMetrics {
		if (p.URL == "") == (p.Files == "") {
			bad("otlp.trtllm_perf_metrics[%d]: want url or files, one of them", i)
			continue
		}
		if p.Files != "" {
			if _, err := filepath.Match(p.Files, ""); err != nil {
				bad("otlp.trtllm_perf_metrics[%d].files %q: %v", i, p.Files, err)
			}
			continue
		}
		u, err := url.Parse(p.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("otlp.trtllm_perf_metrics[%d].url %q: want an http(s) URL, e.g. http://disagg:8000/perf_metrics", i, p.URL)
		}
	}
	if o.MaxBytes < 0 {
		bad("otlp.max_bytes %d must be > 0", o.MaxBytes)
	}
	if o.MaxSpans < 0 {
		bad("otlp.max_spans %d must be > 0", o.MaxSpans)
	}
	return errs
}
