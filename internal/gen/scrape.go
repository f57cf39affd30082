package gen

import (
	"bytes"
	"fmt"
	"sort"

	"go.yaml.in/yaml/v3"
)

// Job names of the generated scrape config. The alert on ptdmon being down
// reads job="ptdmon".
const (
	JobPtdmon  = "ptdmon"
	JobEngines = "ptdmon-engines"
)

// Target labels the relabelling attaches to every engine series; the
// engines-path rules group by them.
const (
	labelTarget = "ptd_target"
	labelRole   = "ptd_role"
	labelEngine = "ptd_engine"
	// labelPool names the target's pool (docs/pools.md): `pool:` in
	// ptdmon.yaml, or ptd_pool or pool in a file_sd group.
	labelPool = "ptd_pool"
)

// TensorRT-LLM serves Prometheus text on another path than its JSON /metrics
// (which is drained on read and must be left to ptdmon).
const trtllmMetricsPath = "/prometheus/metrics"

type promConfig struct {
	Global        promGlobal     `yaml:"global"`
	RuleFiles     []string       `yaml:"rule_files,omitempty"`
	ScrapeConfigs []scrapeConfig `yaml:"scrape_configs"`
}

type promGlobal struct {
	ScrapeInterval     string `yaml:"scrape_interval"`
	ScrapeTimeout      string `yaml:"scrape_timeout"`
	EvaluationInterval string `yaml:"evaluation_interval"`
}

type scrapeConfig struct {
	JobName        string          `yaml:"job_name"`
	ScrapeInterval string          `yaml:"scrape_interval"`
	ScrapeTimeout  string          `yaml:"scrape_timeout"`
	MetricsPath    string          `yaml:"metrics_path,omitempty"`
	StaticConfigs  []staticConfig  `yaml:"static_configs,omitempty"`
	FileSDConfigs  []fileSDConfig  `yaml:"file_sd_configs,omitempty"`
	RelabelConfigs []relabelConfig `yaml:"relabel_configs,omitempty"`
	// MetricRelabelConfigs apply to every scraped series, after the scrape.
	MetricRelabelConfigs []relabelConfig `yaml:"metric_relabel_configs,omitempty"`
}

type staticConfig struct {
	Targets []string          `yaml:"targets"`
	Labels  map[string]string `yaml:"labels,omitempty"`
}

type fileSDConfig struct {
	Files           []string `yaml:"files"`
	RefreshInterval string   `yaml:"refresh_interval,omitempty"`
}

type relabelConfig struct {
	SourceLabels []string `yaml:"source_labels,omitempty,flow"`
	Separator    string   `yaml:"separator,omitempty"`
	Regex        string   `yaml:"regex,omitempty"`
	TargetLabel  string   `yaml:"target_label,omitempty"`
	Replacement  string   `yaml:"replacement,omitempty"`
	Action       string   `yaml:"action,omitempty"`
}

// Hidden target labels carrying ptdmon.yaml's fields into relabelling;
// labels starting with "__" are dropped once relabelling is done.
const (
	hiddenName   = "__ptd_name"
	hiddenRole   = "__ptd_role"
	hiddenEngine = "__ptd_engine"
)

// engineRelabel turns the hidden labels (static targets) or file_sd's
// ptd_target into ptd_target/ptd_role/ptd_engine, and points TensorRT-LLM at
// its Prometheus endpoint unless the URL names another path.
func engineRelabel() []relabelConfig {
	return []relabelConfig{
		// A file_sd ptd_target is kept; else the deprecated ptd_name, else
		// host:port, as ptdmon names file_sd targets.
		{SourceLabels: []string{labelTarget, "ptd_name"}, Separator: ";", Regex: ";(.+)", TargetLabel: labelTarget},
		{SourceLabels: []string{labelTarget, "__address__"}, Separator: ";", Regex: ";(.+)", TargetLabel: labelTarget},
		{SourceLabels: []string{hiddenName}, Regex: "(.+)", TargetLabel: labelTarget},
		{SourceLabels: []string{hiddenRole}, Regex: "(.+)", TargetLabel: labelRole},
		{SourceLabels: []string{hiddenEngine}, Regex: "(.+)", TargetLabel: labelEngine},
		// file_sd's short pool label, where ptd_pool is not given.
		{SourceLabels: []string{labelPool, "pool"}, Separator: ";", Regex: ";(.+)", TargetLabel: labelPool},
		{Regex: "ptd_name", Action: "labeldrop"},
		{SourceLabels: []string{labelEngine, "__metrics_path__"}, Separator: ";", Regex: "trtllm;/metrics",
			TargetLabel: "__metrics_path__", Replacement: trtllmMetricsPath},
	}
}

// PrometheusConfig returns a prometheus.yml that scrapes ptdmon's /metrics
// and every engine directly, each once a second.
func PrometheusConfig(in Input) ([]byte, error) {
	in = in.withDefaults()
	if err := in.Check(); err != nil {
		return nil, err
	}
	cfg := promConfig{
		Global:    promGlobal{ScrapeInterval: "1s", ScrapeTimeout: "900ms", EvaluationInterval: "1s"},
		RuleFiles: in.RuleFiles,
		ScrapeConfigs: []scrapeConfig{{
			JobName: JobPtdmon, ScrapeInterval: "1s", ScrapeTimeout: "900ms",
			StaticConfigs: []staticConfig{{Targets: []string{in.PtdmonAddr}}},
		}},
	}
	engines := scrapeConfig{JobName: JobEngines, ScrapeInterval: "1s", ScrapeTimeout: "900ms", RelabelConfigs: engineRelabel(),
		MetricRelabelConfigs: engineMetricRelabel()}
	for _, t := range in.Targets {
		u, err := splitURL(t.URL)
		if err != nil {
			return nil, err
		}
		labels := map[string]string{
			hiddenName: t.Name, hiddenRole: string(t.Role),
			"__scheme__": u.scheme, "__metrics_path__": u.path,
		}
		if e := string(t.Engine); e != "" {
			labels[hiddenEngine] = e
		}
		for k, v := range t.Labels {
			labels[k] = v
		}
		engines.StaticConfigs = append(engines.StaticConfigs, staticConfig{Targets: []string{u.host}, Labels: labels})
	}
	if len(in.FileSD) > 0 {
		files := append([]string(nil), in.FileSD...)
		sort.Strings(files)
		engines.FileSDConfigs = []fileSDConfig{{Files: files, RefreshInterval: "30s"}}
	}
	if len(engines.StaticConfigs)+len(engines.FileSDConfigs) > 0 {
		cfg.ScrapeConfigs = append(cfg.ScrapeConfigs, engines)
	}
	var b bytes.Buffer
	b.WriteString("# Generated by `ptdmon gen prometheus`; do not edit.\n")
	b.WriteString("# Job " + JobPtdmon + " scrapes ptdmon (path=\"ptdmon\" in the rules); job " + JobEngines + "\n")
	b.WriteString("# scrapes the engines directly (path=\"engines\"). Keep both, or drop either.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(cfg); err != nil {
		return nil, fmt.Errorf("encode prometheus config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode prometheus config: %w", err)
	}
	return b.Bytes(), nil
}
