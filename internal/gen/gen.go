// Package gen generates deployment artifacts for running ptdmon with
// Prometheus and Grafana: the scrape configuration, the recording and
// alerting rules, the dashboards, and docker-compose / Kubernetes manifests.
//
// Every generator is a pure function of an Input, so the checked-in files
// under deploy/ can be compared byte for byte with what the code produces.
package gen

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
)

// Input is everything the generators read.
type Input struct {
	// Targets are the engine endpoints Prometheus scrapes directly.
	Targets []engine.Target
	// FileSD lists file_sd files (globs) that also supply engine targets,
	// with ptdmon's labels ptd_role, ptd_engine and ptd_target.
	FileSD []string
	// PtdmonAddr is host:port of ptdmon's own /metrics.
	PtdmonAddr string
	// Window is W of the windowed rates.
	Window time.Duration
	// KVBytesPerRequest is B_request; 0 means unset, in which case the
	// engines path has no KV req/s and an alert says so.
	KVBytesPerRequest int64
	// PoolKVBytes is each pool's own B_request (pools: in ptdmon.yaml).
	// Once any pool has one, a pool without one has no KV req/s, on both
	// paths (docs/pools.md).
	PoolKVBytes map[string]int64
	// KVSource restricts the engines path to one KV byte source, like
	// ptdmon's kv_source (auto or "" = every source).
	KVSource string
	// RuleFiles are written into the Prometheus config's rule_files.
	RuleFiles []string
	// BuildContext is the ptdmon source tree relative to the compose
	// directory, and Dockerfile the Dockerfile relative to BuildContext:
	// the compose file builds the ptdmon image from them. Defaults: the
	// layout of this repository's deploy/compose.
	BuildContext, Dockerfile string
	// Release is the release label of the generated PodMonitor,
	// ServiceMonitor and PrometheusRule, which kube-prometheus-stack
	// selects them by ("" for none); FromConfig sets DefaultRelease.
	Release string
}

// Defaults for an Input built from nothing.
const (
	DefaultWindow     = config.DefaultWindow
	DefaultPtdmonAddr = "127.0.0.1:9433"
)

// FromConfig builds an Input from a loaded ptdmon.yaml. B_request is passed
// separately because it may be computed from the model's config.json.
func FromConfig(cfg *config.Config, kvBytes int64) Input {
	in := Input{
		PtdmonAddr:        cfg.Listen,
		Window:            cfg.Window.Duration,
		KVBytesPerRequest: kvBytes,
		KVSource:          cfg.KVSource,
		Release:           DefaultRelease,
	}
	for _, t := range cfg.Targets {
		in.Targets = append(in.Targets, cfg.ResolveTarget(t))
	}
	for _, e := range cfg.FileSD {
		in.FileSD = append(in.FileSD, e.Files...)
	}
	return in.withDefaults()
}

// WithPools sets each pool's own B_request (config.Config.PoolRequests).
func (in Input) WithPools(reqs map[string]kvsize.Request) Input {
	for name, r := range reqs {
		if in.PoolKVBytes == nil {
			in.PoolKVBytes = map[string]int64{}
		}
		in.PoolKVBytes[name] = r.Bytes
	}
	return in
}

func (in Input) withDefaults() Input {
	if in.Window <= 0 {
		in.Window = DefaultWindow
	}
	if in.PtdmonAddr == "" {
		in.PtdmonAddr = DefaultPtdmonAddr
	}
	if in.BuildContext == "" {
		in.BuildContext, in.Dockerfile = "../..", "deploy/compose/Dockerfile"
	}
	return in
}

// Check reports targets Prometheus could not scrape. It is looser than
// config.Validate: Prometheus can scrape TensorRT-LLM even where ptdmon's
// own adapters do not read it.
func (in Input) Check() error {
	seen := map[string]bool{}
	for _, t := range in.Targets {
		if _, err := splitURL(t.URL); err != nil {
			return fmt.Errorf("target %q: %w", t.Name, err)
		}
		switch t.Role {
		case "prefill", "decode", "router":
		default:
			return fmt.Errorf("target %q: role %q: want prefill, decode or router (the rules group by role)", t.Name, t.Role)
		}
		if t.Engine != engine.EngineAuto && !slices.Contains(engine.Engines(), t.Engine) {
			return fmt.Errorf("target %q: engine %q: want %s", t.Name, t.Engine, engine.EngineChoices())
		}
		if seen[t.Name] {
			return fmt.Errorf("target name %q is used twice", t.Name)
		}
		seen[t.Name] = true
	}
	if in.Window < 2*time.Second {
		return fmt.Errorf("window %s must hold at least two 1s scrapes", in.Window)
	}
	return nil
}

type scrapeURL struct {
	scheme, host, path string
}

func splitURL(raw string) (scrapeURL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return scrapeURL{}, fmt.Errorf("url %q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return scrapeURL{}, fmt.Errorf("url %q: want http(s)://host:port/path", raw)
	}
	p := u.EscapedPath()
	if p == "" || p == "/" {
		p = "/metrics"
	}
	return scrapeURL{scheme: u.Scheme, host: u.Host, path: p}, nil
}

// promDuration writes d the way PromQL range selectors and recorded names
// do ("5s", "1m"), matching ptdmon's own window label.
func promDuration(d time.Duration) string {
	return model.Duration(d).String()
}

// engineAlternatives lists the registered engines' names as "a|b|c".
func engineAlternatives() string {
	var out []string
	for _, e := range engine.Engines() {
		out = append(out, string(e))
	}
	return strings.Join(out, "|")
}

// kvSourceNames lists the registered KV sources' names as "a, b, c".
func kvSourceNames() string {
	var out []string
	for _, c := range engine.Connectors() {
		out = append(out, string(c.Source))
	}
	return strings.Join(out, ", ")
}
