package config

import "fmt"

// RecordConfig keeps the run on disk (internal/record, docs/runs.md).
type RecordConfig struct {
	// Dir is the recording's directory; empty records nothing.
	Dir string `yaml:"dir"`
	// Retention drops recorded blocks older than this (default 15d, as
	// Prometheus); MaxBytes drops the oldest beyond this size (0: none).
	Retention Duration `yaml:"retention"`
	MaxBytes  int64    `yaml:"max_bytes"`
}

// validateRecord checks the record section; where names the line.
func (c *Config) validateRecord(bad func(where, format string, a ...any), where string) {
	r := c.Record
	if r.Retention.Duration < 0 || r.Retention.given && r.Retention.Duration == 0 {
		bad(where, "record: retention %s must be > 0", r.Retention)
	}
	if r.MaxBytes < 0 {
		bad(where, "record: max_bytes %s must be ≥ 0", fmt.Sprint(r.MaxBytes))
	}
	if (r.Retention.given || r.MaxBytes != 0) && r.Dir == "" {
		bad(where, "record: retention and max_bytes need a dir")
	}
}

// Settings is c without what says where ptdmon keeps and serves the run —
// the record section, listen, allowed_hosts and web_config_file — which
// change nothing of what is measured: a recording's configuration hash is
// of these settings, so two rounds recorded into two directories, or
// served on two ports, hash alike.
func (c *Config) Settings() Config {
	s := *c
	s.Record = RecordConfig{}
	s.Listen, s.AllowedHosts, s.WebConfigFile = "", nil, ""
	return s
}
