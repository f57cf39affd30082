package service

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/shard"
)

// TestShardsSplitTargets: N collectors with -shard i/N each keep the
// targets hashmod puts in their shard, and together keep every target once.
func TestShardsSplitTargets(t *testing.T) {
	var targets []config.Target
	for i := range 40 {
		targets = append(targets, config.Target{Name: fmt.Sprintf("e%d", i), URL: fmt.Sprintf("http://10.1.%d.%d:8000/metrics", i/10, i), Role: "prefill"})
	}
	const n = 3
	owner := map[string]int{}
	for i := range n {
		cfg := &config.Config{Targets: targets, Shard: fmt.Sprintf("%d/%d", i, n)}
		got, err := resolveTargets(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		sh, _ := shard.Parse(cfg.Shard)
		for _, tg := range got {
			if prev, dup := owner[tg.Name]; dup {
				t.Errorf("%s kept by shards %d and %d", tg.Name, prev, i)
			}
			owner[tg.Name] = i
			u, _ := url.Parse(tg.URL)
			if !sh.Keep(u.Host) {
				t.Errorf("shard %s keeps %s (%s), hashmod puts it elsewhere", cfg.Shard, tg.Name, u.Host)
			}
		}
		if len(got) == 0 || len(got) == len(targets) {
			t.Errorf("shard %s keeps %d of %d targets", cfg.Shard, len(got), len(targets))
		}
	}
	if len(owner) != len(targets) {
		t.Errorf("%d of %d targets kept by some shard", len(owner), len(targets))
	}
}
