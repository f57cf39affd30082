// Package shard splits a fleet of targets between N collectors the way
// Prometheus' hashmod relabelling does, so that ptdmon shard i of N and a
// Prometheus sharded with the same modulus keep the same targets.
//
// The rule is Prometheus' own (model/relabel, action hashmod): the MD5 of the
// target's address, its last 8 bytes read as a big-endian integer, modulo N.
// See https://prometheus.io/docs/prometheus/latest/configuration/configuration/#relabel_config
package shard

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/relabel"
)

// AddressLabel is the label hashed: Prometheus' target address (host:port).
const AddressLabel = model.AddressLabel

// hashLabel holds the hash while the rules run, as in the usual
// Prometheus sharding recipe.
const hashLabel = "__tmp_hash"

// Shard is shard Index of Count. The zero value keeps everything.
type Shard struct {
	Index, Count uint64
	rules        []*relabel.Config
}

// Parse reads "i/N" (0 ≤ i < N). The empty string is no sharding.
func Parse(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.ParseUint(strings.TrimSpace(is), 10, 64)
	n, err2 := strconv.ParseUint(strings.TrimSpace(ns), 10, 64)
	if !ok || err1 != nil || err2 != nil || n == 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: want i/N with 0 <= i < N, e.g. 0/2", s)
	}
	sh := Shard{Index: i, Count: n}
	sh.rules = sh.Relabel()
	return sh, nil
}

// Enabled tells whether the shard drops anything.
func (s Shard) Enabled() bool { return s.Count > 1 }

// String is "i/N", or "" without sharding.
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Relabel returns the Prometheus relabel rules that keep this shard's
// targets: hashmod of __address__ into a temporary label, then keep.
func (s Shard) Relabel() []*relabel.Config {
	return []*relabel.Config{
		{
			SourceLabels: model.LabelNames{AddressLabel}, Separator: ";", Regex: relabel.MustNewRegexp("(.*)"),
			Modulus: s.Count, TargetLabel: hashLabel, Replacement: "$1", Action: relabel.HashMod,
		},
		{
			SourceLabels: model.LabelNames{hashLabel}, Separator: ";",
			Regex: relabel.MustNewRegexp(strconv.FormatUint(s.Index, 10)), Replacement: "$1", Action: relabel.Keep,
		},
	}
}

// Keep tells whether the target at address (host:port) belongs to the shard.
func (s Shard) Keep(address string) bool {
	if !s.Enabled() {
		return true
	}
	rules := s.rules
	if rules == nil {
		rules = s.Relabel()
	}
	lb := labels.NewBuilder(labels.FromStrings(AddressLabel, address))
	return relabel.ProcessBuilder(lb, rules...)
}
