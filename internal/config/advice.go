package config

import (
	"fmt"
	"math"
)

// validateAdvice checks the SLO thresholds and the headroom; at names where
// a key was set.
func (c *Config) validateAdvice(at func(string) string) []error {
	var errs []error
	for _, x := range []struct {
		key string
		v   float64
	}{{"ttft", c.SLO.TTFT}, {"itl", c.SLO.ITL}, {"e2e", c.SLO.E2E}} {
		if x.v < 0 || math.IsNaN(x.v) || math.IsInf(x.v, 0) {
			errs = append(errs, fmt.Errorf("%s: slo.%s %g: want a threshold in seconds ≥ 0 (0: none)", at("slo."+x.key), x.key, x.v))
		}
	}
	if h := c.Headroom; h != nil && !(*h >= 0 && *h < 1) {
		errs = append(errs, fmt.Errorf("%s: headroom %g: want 0 ≤ headroom < 1 (the fraction of capacity left unused)", at("headroom"), *h))
	}
	return errs
}
