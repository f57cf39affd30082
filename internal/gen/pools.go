package gen

import (
	"sort"
	"strconv"
)

// kvMatch is the labels KV bytes meet their B_request on: the path, and
// with pools of their own the pool too.
func kvMatch(pools map[string]int64) string {
	if len(pools) > 0 {
		return "path, pool"
	}
	return "path"
}

// poolKVRequestRules record each pool's own B_request on both paths, as
// constants from ptdmon.yaml: ptdmon exports one B_request, the
// deployment's, which is some model's number and not every pool's.
func poolKVRequestRules(n Names, pools map[string]int64) []Rule {
	names := make([]string, 0, len(pools))
	for name := range pools {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []Rule
	for _, path := range []string{pathPtdmon, pathEngines} {
		for _, name := range names {
			if b := pools[name]; b > 0 {
				out = append(out, record(n.KVRequestBytes, "vector("+strconv.FormatInt(b, 10)+")", "path", path, "pool", name))
			}
		}
	}
	return out
}
