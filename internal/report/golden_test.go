package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/sim"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output; run with -update if the change is intended\n%s", path, got)
	}
}

// TestGolden writes the report of a simulated prefill-bound run (seed 1,
// 200 s) as Markdown and JSON, and the comparison with the round after
// the advice (one more prefill instance per group).
func TestGolden(t *testing.T) {
	in, _ := simInput(t, "prefill-bound", 1, 200*time.Second, nil)
	r, err := Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	js, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "prefill-bound.json.golden", js)
	golden(t, "prefill-bound.md.golden", r.Markdown())

	after := simReport(t, "prefill-bound", 2, func(sc *sim.Scenario) {
		for i := range sc.Groups {
			sc.Groups[i].Prefill.Instances++
		}
	})
	c := Compare(&r, after, "before", "after")
	golden(t, "compare.md.golden", c.Markdown())
	cj, err := c.JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.json.golden", cj)

	// A report read back from its JSON compares the same.
	back, err := ReadJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	again := Compare(back, after, "before", "after")
	if got, want := string(again.Markdown()), string(c.Markdown()); got != want {
		t.Errorf("comparison from the JSON report differs:\n%s\nwant\n%s", got, want)
	}
}
