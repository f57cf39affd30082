package api

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// numPaths sets every ledger.Num inside v (a pointer to a struct) to a
// distinct value and returns the JSON path of each value.
func numPaths(v any) map[float64]string {
	out := map[float64]string{}
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		if v.Type() == reflect.TypeOf(ledger.Num{}) {
			x := float64(len(out) + 100)
			v.Set(reflect.ValueOf(ledger.Val(x)))
			out[x] = prefix
			return
		}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue // not in the JSON
			}
			if f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == t.PkgPath() {
				if prefix != "" {
					name = prefix + "." + name
				}
				walk(v.Field(i), name)
			}
		}
	}
	walk(reflect.ValueOf(v).Elem(), "")
	return out
}

// compactName is the compact encoding's name for a JSON path:
// queues.bootstrap → queue_bootstrap, ttft_seconds.p50 → ttft_p50.
func compactName(path string) string {
	first, rest, nested := strings.Cut(path, ".")
	if !nested {
		return path
	}
	first = strings.TrimSuffix(first, "_seconds")
	if first == "queues" {
		first = "queue"
	}
	return first + "_" + rest
}

// TestCompactFieldsMatchJSON: each position of the compact arrays carries
// the value the verbose JSON names the same way, and every value of the
// verbose JSON has a position, so the two encodings say the same thing.
func TestCompactFieldsMatchJSON(t *testing.T) {
	f := func(name string, point any, nums func() []ledger.Num, fields []string) {
		t.Run(name, func(t *testing.T) {
			paths := numPaths(point)
			got := nums()
			if len(got) != len(fields) {
				t.Fatalf("%d values for %d field names", len(got), len(fields))
			}
			seen := map[string]bool{}
			for i, n := range got {
				path, ok := paths[n.V]
				if !ok {
					continue // not a Num of the point (instances' "up")
				}
				seen[path] = true
				if compactName(path) != fields[i] {
					t.Errorf("position %d is named %q but carries %q of the JSON", i, fields[i], path)
				}
			}
			for _, path := range paths {
				if !seen[path] {
					t.Errorf("%q of the JSON has no position in the compact encoding", path)
				}
			}
		})
	}
	var s ledger.StagePoint
	f("stage", &s, func() []ledger.Num { return stageNums(&s) }, CompactFields["p"])
	var k ledger.KVPoint
	f("kv", &k, func() []ledger.Num { return kvNums(&k) }, CompactFields["k"])
	in := ledger.InstancePoint{Up: true}
	f("instance", &in, func() []ledger.Num { return instanceNums(&in)[1:] }, CompactFields["i"][1:])
	if CompactFields["i"][0] != "up" || instanceNums(&in)[0] != ledger.Val(1) {
		t.Errorf("an instance's first position must be up")
	}
}
