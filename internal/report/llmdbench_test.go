package report

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ptdmon/ptdmon/internal/benchresult"
)

// brSchema compiles the vendored schema of the report format's pinned
// version (testdata/README.md), formats asserted.
func brSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	b, err := os.ReadFile("testdata/llmd_br_v0_2_1_json_schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("br_v0_2_1.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("br_v0_2_1.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(s *jsonschema.Schema, b []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// TestLLMDBenchmarkExport: the export of a round, with and without a
// client view, validates against the pinned schema; what it says of the
// client reads back as the generator's figures; and the schema does catch
// a broken report.
func TestLLMDBenchmarkExport(t *testing.T) {
	schema := brSchema(t)
	in, run, _ := simBench(t, 60*time.Second)
	fig := run.Figures()
	bare, err := Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := benchresult.Read("benchmarks.json", run.GuideLLM())
	if err != nil {
		t.Fatal(err)
	}
	in.Bench = &res
	full, err := Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*Report{"server only": &bare, "with the client": &full} {
		b, err := r.LLMDBenchmark()
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(schema, b); err != nil {
			t.Errorf("%s: the export does not validate: %v", name, err)
		}
		var doc struct {
			Results struct {
				Observability struct {
					Ptdmon struct {
						Stages  Stages `json:"stages"`
						Verdict Modal  `json:"verdict"`
					} `json:"ptdmon"`
				} `json:"observability"`
			} `json:"results"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		p := doc.Results.Observability.Ptdmon
		if p.Verdict.Class != r.Verdict.Class || p.Stages.Decode.RequestsPerSecond == nil ||
			*p.Stages.Decode.RequestsPerSecond != *r.Stages.Decode.RequestsPerSecond {
			t.Errorf("%s: observability.ptdmon %+v does not carry the report's verdict and stages", name, p)
		}
		if name == "with the client" {
			back, err := benchresult.Read("export.json", b)
			if err != nil {
				t.Fatal(err)
			}
			if *back.Completed != fig.Completed || *back.Failed != fig.Failed || *back.TTFT.P99 != fig.TTFT.P99 || *back.RequestRate != fig.RequestRate {
				t.Errorf("the export reads back as completed %d failed %d TTFT p99 %g rate %g; the generator's %d, %d, %g, %g",
					*back.Completed, *back.Failed, *back.TTFT.P99, *back.RequestRate, fig.Completed, fig.Failed, fig.TTFT.P99, fig.RequestRate)
			}
		}
	}
	b, _ := full.LLMDBenchmark()
	broken := bytes.Replace(b, []byte(`"units": "s"`), []byte(`"units": "fortnights"`), 1)
	if err := validate(schema, broken); err == nil || !strings.Contains(err.Error(), "units") {
		t.Errorf("a unit the format does not know validated (%v): the schema is not applied", err)
	}
}
