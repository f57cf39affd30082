// Package config reads ptdmon.yaml and builds the same configuration from
// command-line flags. Errors name the file and line.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/scrape"
	"github.com/ptdmon/ptdmon/internal/slo"
)

// Config is ptdmon's whole configuration.
type Config struct {
	Listen       string   `yaml:"listen"`
	Interval     Duration `yaml:"interval"`
	Timeout      Duration `yaml:"timeout"`
	Window       Duration `yaml:"window"`
	History      Duration `yaml:"history"`
	MaxBodyBytes int64    `yaml:"max_body_bytes"`
	// BodyBudgetBytes bounds the bytes of all scrape bodies in flight
	// together (default 64 MiB).
	BodyBudgetBytes int64 `yaml:"body_budget_bytes"`
	// MaxSeries bounds the counter series kept per target (default 50,000).
	MaxSeries int `yaml:"max_series_per_target"`
	// FollowRedirects follows a target's redirects to other hosts and
	// ports; by default only those within the target's own host and port.
	FollowRedirects bool `yaml:"follow_redirects"`
	// AllowedHosts, when set, are the only Host headers the HTTP server
	// answers (host or host:port), against DNS rebinding.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// WebConfigFile is an exporter-toolkit web configuration (TLS, basic
	// auth) for the HTTP server.
	WebConfigFile     string      `yaml:"web_config_file"`
	KVSource          string      `yaml:"kv_source"`
	KVBytesPerRequest int64       `yaml:"kv_bytes_per_request"`
	Model             ModelConfig `yaml:"model"`
	// MaxNumSeqs is the most requests one decode instance runs at once
	// (vLLM's --max-num-seqs, SGLang's --max-running-requests, TensorRT-
	// LLM's max_batch_size), for a deployment of one pool; a pool's own
	// in pools. The advisor carries decode's rate to it
	// (docs/advisor.md#decode-batch).
	MaxNumSeqs int `yaml:"max_num_seqs"`
	// Pools are the pools' own B_request by pool name (pools.go).
	Pools   map[string]PoolConfig `yaml:"pools"`
	Targets []Target              `yaml:"targets"`
	FileSD  []FileSDEntry         `yaml:"file_sd"`
	// KubernetesSD finds the engines' pods through the Kubernetes API
	// (kubesd.go).
	KubernetesSD *KubernetesSD `yaml:"kubernetes_sd"`
	// Source reads the engines from a Prometheus-compatible TSDB instead of
	// scraping them ("prometheus=URL"); see fleet.go.
	Source string `yaml:"source"`
	// Shard keeps only the targets of shard "i/N" (Prometheus hashmod).
	Shard string `yaml:"shard"`
	// SLO thresholds in seconds (ttft, itl, e2e) of the attainment in
	// /api/v1/advice; see docs/advisor.md.
	SLO slo.Thresholds `yaml:"slo"`
	// Headroom is the fraction of capacity the advice leaves unused (nil:
	// advice.DefaultHeadroom).
	Headroom *float64 `yaml:"headroom"`
	// CapacitiesFrom is the recording of an earlier run of the same
	// deployment whose capacities the advice starts from
	// (docs/advisor.md#capacities-across-runs).
	CapacitiesFrom string `yaml:"capacities_from"`
	// OTLP is the trace receiver (otlp.go).
	OTLP OTLP `yaml:"otlp"`
	// Record keeps the run on disk (record.go).
	Record RecordConfig `yaml:"record"`

	file string
	// set names where each explicitly given setting came from
	// ("ptdmon.yaml:3", "-interval"): those are validated, never replaced.
	set map[string]string
}

// ModelConfig computes B_request from a model's config.json instead of
// kv_bytes_per_request.
type ModelConfig struct {
	Config     string `yaml:"config"`
	SeqLen     int    `yaml:"seq_len"`
	KVDtype    string `yaml:"kv_dtype"`
	TP         int    `yaml:"tp"`
	WindowMode string `yaml:"window_mode"`
}

// Target is one engine instance to scrape.
type Target struct {
	Name   string `yaml:"name"`
	URL    string `yaml:"url"`
	Role   string `yaml:"role"`
	Engine string `yaml:"engine"`
	// Pool names the target's pool (docs/pools.md); default: the model
	// its exposition names.
	Pool   string            `yaml:"pool"`
	Labels map[string]string `yaml:"labels"`
	// IterationStats reads url as TensorRT-LLM's JSON iteration statistics
	// (GET /metrics of a worker with enable_iter_perf_stats) instead of a
	// Prometheus exposition. Reads drain that endpoint: ptdmon must be its
	// only reader, and the same worker must not also be listed through
	// /prometheus/metrics, or its completions count twice.
	IterationStats bool `yaml:"iteration_stats"`
	// ForwardPassMetrics are the ZeroMQ endpoints where a vLLM or SGLang
	// instance started with --forward-pass-metrics-port publishes its
	// forward-pass metrics, one per DP rank (tcp://host:port, vLLM's port
	// plus the rank): its busy time is read from them
	// (docs/engines.md#forward-pass-metrics).
	ForwardPassMetrics []string `yaml:"forward_pass_metrics"`
	// Serves names the target of the engine instance a transfer library's
	// endpoint serves (serves.go): the library's target takes its role.
	Serves string `yaml:"serves"`

	// DefinedAt is where the target was defined, for error messages
	// ("ptdmon.yaml:12", "-prefill", a file_sd file's group and entry).
	DefinedAt string `yaml:"-"`
}

// Resolve turns the YAML form into the typed target every later stage
// reads: the role and engine names parsed (aliases such as "ctx" or "gen"
// become prefill and decode; "auto" and "" leave them to the exposition).
// Validate has already rejected names that do not parse.
func (t Target) Resolve() engine.Target {
	role, _ := engine.ParseRole(t.Role)
	eng, _ := engine.ParseEngine(t.Engine)
	return engine.Target{Name: t.Name, URL: t.URL, Role: role, Engine: eng, Labels: t.poolLabels(), IterationStats: t.IterationStats,
		ForwardPassMetrics: t.ForwardPassMetrics}
}

// FileSDEntry names Prometheus file_sd files that supply targets.
type FileSDEntry struct {
	Files   []string `yaml:"files"`
	Refresh Duration `yaml:"refresh_interval"`
}

// Duration reads Go durations ("1s", "500ms") and Prometheus ones ("1m", "1h").
type Duration struct {
	time.Duration
	given bool // read from the file, so validated rather than defaulted
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (e.g. 1s, 500ms, 1h)", n.Line, n.Value)
	}
	d.Duration, d.given = v, true
	return nil
}

// MarshalYAML writes the duration as text.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// Defaults.
const (
	DefaultListen   = "127.0.0.1:9433"
	DefaultInterval = time.Second
	DefaultWindow   = ledger.DefaultWindow
	DefaultHistory  = time.Hour
)

// Load reads a configuration file. The caller may add flags' values, then
// calls SetDefaults and Validate.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(data, path)
}

var lineRE = regexp.MustCompile(`line (\d+): `)

// Parse reads a configuration from data; file names it in errors. Like
// Load, it neither fills defaults nor validates.
func Parse(data []byte, file string) (*Config, error) {
	c := &Config{file: file}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlError(file, problemLine(data, err))
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err == nil && len(root.Content) == 1 && root.Content[0].Kind == yaml.MappingNode {
		m := root.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			c.mark(m.Content[i].Value, fmt.Sprintf("%s:%d", file, m.Content[i].Line))
			if v := m.Content[i+1]; m.Content[i].Value == "slo" && v.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(v.Content); j += 2 {
					c.mark("slo."+v.Content[j].Value, fmt.Sprintf("%s:%d", file, v.Content[j].Line))
				}
			}
		}
	}
	for i := range c.Targets {
		c.Targets[i].DefinedAt = file + c.Targets[i].DefinedAt
	}
	if c.KubernetesSD != nil {
		c.KubernetesSD.inFile(file)
	}
	return c, nil
}

// yamlError rewrites the YAML library's "line N: msg" into "file:N: msg".
func yamlError(file string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, 0, len(te.Errors))
		for _, e := range te.Errors {
			msgs = append(msgs, atLine(file, e))
		}
		return fmt.Errorf("%s", strings.Join(msgs, "\n"))
	}
	return fmt.Errorf("%s", atLine(file, strings.TrimPrefix(err.Error(), "yaml: ")))
}

// unknownTopRE is the YAML library's message for a key Config lacks.
var unknownTopRE = regexp.MustCompile(`field (\S+) not found in type config\.Config`)

// topKeys lists ptdmon.yaml's top-level keys, from Config's yaml tags.
func topKeys() string {
	var keys []string
	t := reflect.TypeOf(Config{})
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
			keys = append(keys, k)
		}
	}
	return strings.Join(keys, ", ")
}

func atLine(file, msg string) string {
	// A typo at the top level names the key and what the file takes, not
	// a Go type.
	msg = unknownTopRE.ReplaceAllString(msg, "unknown key $1 (want one of "+topKeys()+")")
	if m := lineRE.FindStringSubmatchIndex(msg); m != nil {
		return fmt.Sprintf("%s:%s: %s", file, msg[m[2]:m[3]], msg[:m[0]]+msg[m[1]:])
	}
	return file + ": " + msg
}

var targetKeys = map[string]bool{"name": true, "url": true, "role": true, "engine": true, "pool": true, "labels": true, "iteration_stats": true, "forward_pass_metrics": true, "serves": true}

// UnmarshalYAML records the target's line. Node.Decode does not inherit the
// decoder's KnownFields, so unknown keys are checked here.
func (t *Target) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; !targetKeys[k.Value] {
				return fmt.Errorf("line %d: field %s not found in target (want name, url, role, engine, pool, labels, iteration_stats, forward_pass_metrics, serves)", k.Line, k.Value)
			}
		}
	}
	type plain Target
	var p plain
	dec := *n
	if err := dec.Decode(&p); err != nil {
		return err
	}
	*t = Target(p)
	t.DefinedAt = ":" + strconv.Itoa(n.Line)
	return nil
}

func (c *Config) mark(key, where string) {
	if c.set == nil {
		c.set = map[string]string{}
	}
	c.set[key] = where
}

func (c *Config) isSet(key string) bool { _, ok := c.set[key]; return ok }

// SetDefaults fills the settings that were not given. A zero that was
// given explicitly stays, for Validate to refuse.
func (c *Config) SetDefaults() {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.Interval.Duration == 0 && !c.isSet("interval") {
		c.Interval.Duration = DefaultInterval
	}
	if c.Timeout.Duration == 0 && !c.isSet("timeout") {
		c.Timeout.Duration = c.Interval.Duration * 4 / 5
	}
	if c.Window.Duration == 0 && !c.isSet("window") {
		c.Window.Duration = DefaultWindow
	}
	if c.History.Duration == 0 && !c.isSet("history") {
		c.History.Duration = DefaultHistory
	}
	if c.MaxBodyBytes == 0 && !c.isSet("max_body_bytes") {
		c.MaxBodyBytes = scrape.DefaultMaxBodyBytes
	}
	if c.BodyBudgetBytes == 0 && !c.isSet("body_budget_bytes") {
		c.BodyBudgetBytes = scrape.DefaultBodyBudget
	}
	if c.MaxSeries == 0 && !c.isSet("max_series_per_target") {
		c.MaxSeries = 50_000
	}
	c.OTLP.setDefaults()
	for i := range c.Targets {
		t := &c.Targets[i]
		if t.Name == "" {
			t.Name = defaultName(t.URL)
		}
	}
	c.tieServed()
}

func defaultName(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}

// Validate checks the configuration; each error names where it comes from.
func (c *Config) Validate() error {
	var errs []error
	bad := func(where, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, a...)))
	}
	file := c.file
	if file == "" {
		file = "flags"
	}
	at := func(key string) string {
		if w, ok := c.set[key]; ok {
			return w
		}
		return file
	}
	positive := func(key string, v int64, show string) bool {
		if v <= 0 {
			bad(at(key), "%s %s must be > 0", key, show)
			return false
		}
		return true
	}
	okInterval := positive("interval", int64(c.Interval.Duration), c.Interval.String())
	// A timeout derived from a bad interval is not a second error.
	okTimeout := (okInterval || c.isSet("timeout")) && positive("timeout", int64(c.Timeout.Duration), c.Timeout.String())
	okWindow := positive("window", int64(c.Window.Duration), c.Window.String())
	positive("history", int64(c.History.Duration), c.History.String())
	positive("max_body_bytes", c.MaxBodyBytes, strconv.FormatInt(c.MaxBodyBytes, 10))
	positive("body_budget_bytes", c.BodyBudgetBytes, strconv.FormatInt(c.BodyBudgetBytes, 10))
	positive("max_series_per_target", int64(c.MaxSeries), strconv.Itoa(c.MaxSeries))
	if okInterval && c.Interval.Duration < 10*time.Millisecond {
		bad(at("interval"), "interval %s is too short", c.Interval)
	}
	if okInterval && okTimeout && c.Timeout.Duration >= c.Interval.Duration {
		bad(at("timeout"), "timeout %s must be shorter than interval %s", c.Timeout, c.Interval)
	}
	if okInterval && okWindow && c.Window.Duration < 2*c.Interval.Duration {
		bad(at("window"), "window %s must hold at least two samples (≥ 2 × interval %s)", c.Window, c.Interval)
	}
	if okInterval && c.History.Duration > 0 && c.History.Duration < c.Interval.Duration {
		bad(at("history"), "history %s is shorter than one interval %s", c.History, c.Interval)
	}
	for i, e := range c.FileSD {
		if e.Refresh.Duration < 0 || e.Refresh.given && e.Refresh.Duration == 0 {
			bad(at("file_sd"), "file_sd entry %d: refresh_interval %s must be > 0", i+1, e.Refresh)
		}
	}
	c.validateRecord(bad, at("record"))
	for _, h := range c.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/ ") {
			bad(at("allowed_hosts"), "allowed_hosts entry %q: want host or host:port", h)
		}
	}
	if _, ok := engine.ParseKVSource(c.KVSource); !ok {
		bad(file, "kv_source %q: want %s", c.KVSource, engine.KVSourceChoices())
	}
	if c.KVBytesPerRequest < 0 {
		bad(file, "kv_bytes_per_request must be positive")
	}
	if c.MaxNumSeqs < 0 {
		bad(at("max_num_seqs"), "max_num_seqs must be positive")
	}
	if c.KVBytesPerRequest > 0 && c.Model.Config != "" {
		bad(file, "set kv_bytes_per_request or model.config, not both")
	}
	if c.Model.Config != "" && c.Model.SeqLen <= 0 {
		bad(file, "model.seq_len must be > 0 when model.config is set")
	}
	seen := map[string]string{}
	for _, t := range c.Targets {
		where := t.DefinedAt
		if where == "" {
			where = file
		}
		if err := t.validate(); err != nil {
			bad(where, "target %q: %v", t.Name, err)
		}
		if prev, dup := seen[t.Name]; dup {
			bad(where, "target name %q is already used at %s", t.Name, prev)
		}
		seen[t.Name] = where
	}
	errs = append(errs, c.validateServes(file)...)
	errs = append(errs, c.validateFleet(file)...)
	errs = append(errs, c.validatePools(at("pools"))...)
	errs = append(errs, c.validateAdvice(at)...)
	errs = append(errs, c.validateOTLP(at)...)
	if c.KubernetesSD != nil {
		errs = append(errs, c.KubernetesSD.validate()...)
	}
	if len(c.Targets) == 0 && len(c.FileSD) == 0 && c.KubernetesSD == nil && c.Source == "" {
		bad(file, "no targets: add targets (or file_sd, kubernetes_sd), or pass -prefill/-decode URLs")
	}
	return errors.Join(errs...)
}

func (t Target) validate() error {
	u, err := url.Parse(t.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url %q: want http(s)://host:port/path", scrape.Redact(t.URL))
	}
	if t.Role != "" {
		if _, ok := engine.ParseRole(t.Role); !ok {
			return fmt.Errorf("role %q: want prefill, decode or router", t.Role)
		}
	}
	eng, ok := engine.ParseEngine(t.Engine)
	if !ok {
		return fmt.Errorf("engine %q: want %s", t.Engine, engine.EngineChoices())
	}
	if t.IterationStats && eng != engine.TensorRTLLM && eng != engine.EngineAuto {
		return fmt.Errorf("iteration_stats is TensorRT-LLM's JSON endpoint; engine is %s", t.Engine)
	}
	if t.IterationStats && t.Role == "" {
		return fmt.Errorf("iteration_stats needs role: prefill or decode (the JSON records do not say)")
	}
	return validForwardPass(t.ForwardPassMetrics, eng)
}

// validForwardPass checks forward_pass_metrics: vLLM's and SGLang's, each
// a tcp://host:port endpoint, none twice.
func validForwardPass(eps []string, eng engine.Engine) error {
	if len(eps) == 0 {
		return nil
	}
	if eng != engine.VLLM && eng != engine.SGLang && eng != engine.EngineAuto {
		return fmt.Errorf("forward_pass_metrics are vLLM's and SGLang's; engine is %s", eng)
	}
	seen := map[string]bool{}
	for _, ep := range eps {
		u, err := url.Parse(ep)
		if err != nil || u.Scheme != "tcp" || u.Hostname() == "" || u.Port() == "" || u.Path != "" {
			return fmt.Errorf("forward_pass_metrics %q: want tcp://host:port", ep)
		}
		if seen[ep] {
			return fmt.Errorf("forward_pass_metrics %q listed twice", ep)
		}
		seen[ep] = true
	}
	return nil
}

// TargetFlag parses -prefill/-decode values: URL or name=URL.
func TargetFlag(role, value string) Target {
	name, u, ok := strings.Cut(value, "=")
	if !ok || strings.Contains(name, "/") || strings.Contains(name, ":") {
		name, u = "", value
	}
	shown := scrape.Redact(u)
	if name != "" {
		shown = name + "=" + shown
	}
	t := Target{Name: name, URL: u, Role: role, DefinedAt: "-" + role + " " + shown}
	if t.Name == "" {
		t.Name = defaultName(u)
	}
	return t
}

// TargetFrom is the YAML form of a typed target (a simulated engine's, for
// example), defined at source.
func TargetFrom(t engine.Target, definedAt string) Target {
	return Target{Name: t.Name, URL: t.URL, Role: string(t.Role), Engine: string(t.Engine), Labels: t.Labels,
		IterationStats: t.IterationStats, ForwardPassMetrics: t.ForwardPassMetrics, DefinedAt: definedAt}
}

// Check validates a target found at run time (a discovered pod), as
// Validate checks the configured ones.
func (t Target) Check() error { return t.validate() }
