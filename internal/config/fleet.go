package config

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/ptdmon/ptdmon/internal/shard"
)

// SourcePrometheus is the only kind of source: any server of Prometheus'
// query API (Prometheus, VictoriaMetrics, Thanos, Mimir).
const SourcePrometheus = "prometheus"

// ParseSource splits "prometheus=URL" into its kind and the API's base URL.
func ParseSource(s string) (kind, base string, err error) {
	kind, base, ok := strings.Cut(s, "=")
	if !ok || kind != SourcePrometheus {
		return "", "", fmt.Errorf("source %q: want prometheus=URL (the base URL of a Prometheus-compatible query API)", s)
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("source %q: want prometheus=http(s)://host:port[/prefix]", s)
	}
	return kind, base, nil
}

// ParseShard reads the shard field.
func (c *Config) ParseShard() (shard.Shard, error) { return shard.Parse(c.Shard) }

// validateFleet checks source and shard.
func (c *Config) validateFleet(file string) []error {
	var errs []error
	if c.Source != "" {
		if _, _, err := ParseSource(c.Source); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", file, err))
		}
		if len(c.Targets) > 0 || len(c.FileSD) > 0 || c.KubernetesSD != nil {
			errs = append(errs, fmt.Errorf("%s: source reads the targets from the TSDB's labels; remove targets, file_sd and kubernetes_sd, or source", file))
		}
	}
	if _, err := c.ParseShard(); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", file, err))
	}
	return errs
}
