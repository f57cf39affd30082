package sim

import (
	"bytes"
	"math"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

var testEpoch = time.Unix(1753795326, 935294600)

func parseExpo(t testing.TB, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse exposition: %v\n%s", err, head(body, 2000))
	}
	return fams
}

func head(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

func labelOf(m *dto.Metric, name string) (string, bool) {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue(), true
		}
	}
	return "", false
}

// sumCounter sums a counter family over all series, skipping series whose
// label `skipLabel` has one of the skip values.
func sumCounter(fams map[string]*dto.MetricFamily, name, skipLabel string, skip ...string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	var s float64
outer:
	for _, m := range f.GetMetric() {
		if v, ok := labelOf(m, skipLabel); ok {
			for _, x := range skip {
				if v == x {
					continue outer
				}
			}
		}
		s += m.GetCounter().GetValue()
	}
	return s, true
}

func sumHist(fams map[string]*dto.MetricFamily, name string) (sum float64, count uint64, ok bool) {
	f, ok := fams[name]
	if !ok {
		return 0, 0, false
	}
	for _, m := range f.GetMetric() {
		sum += m.GetHistogram().GetSampleSum()
		count += m.GetHistogram().GetSampleCount()
	}
	return sum, count, true
}

// exportedCounts computes, from one scrape, the three numbers ptdmon derives
// (docs/design.md#the-three-curves): completions of the instance's role, KV bytes and KV transfers
// as its connector counts them. ok=false means a series is absent.
func exportedCounts(t testing.TB, eng ptd.Engine, role string, fams map[string]*dto.MetricFamily) Counts {
	t.Helper()
	var c Counts
	var done float64
	switch eng {
	case ptd.VLLM:
		v, ok := sumCounter(fams, "vllm:request_success_total", "finished_reason", "abort", "error")
		if !ok {
			t.Fatal("vllm:request_success_total missing")
		}
		done = v
		if b, ok := sumCounter(fams, "vllm:flagcx_total_bytes_transferred_total", ""); ok {
			n, _ := sumCounter(fams, "vllm:flagcx_transfers_total", "")
			c.KVBytes, c.KVTransfers = int64(b), int64(n)
		} else if s, n, ok := sumHist(fams, "vllm:nixl_bytes_transferred"); ok {
			c.KVBytes, c.KVTransfers = int64(s), int64(n)
		} else {
			t.Fatal("no KV connector family")
		}
	case ptd.SGLang:
		v, _ := sumCounter(fams, "sglang:num_requests_total", "")
		done = v
		if s, n, ok := sumHist(fams, "sglang:kv_transfer_total_mb"); ok {
			c.KVBytes, c.KVTransfers = int64(math.Round(s*(1<<20))), int64(n)
		}
	}
	if role == RolePrefill {
		c.PrefillCompleted = int64(done)
	} else {
		c.DecodeCompleted = int64(done)
	}
	return c
}

// roleCounts keeps only what an instance of that role is expected to export.
func roleCounts(role string, c Counts) Counts {
	if role == RolePrefill {
		c.DecodeCompleted = 0
	} else {
		c.PrefillCompleted = 0
	}
	return c
}

// mixedScenario exercises every format/connector: vLLM FlagCX with DP=2 on
// prefill, vLLM NIXL, SGLang with DP=2 on decode.
func mixedScenario() Scenario {
	sc := baseScenario()
	sc.Name = "mixed"
	fl := sc.Groups[0]
	fl.Name = "flagcx"
	fl.Prefill.DP = 2
	fl.Prefill.Instances = 1
	nx := sc.Groups[0]
	nx.Name, nx.Connector, nx.Rate = "nixl", ConnectorNIXL, 2
	nx.Prefill.Instances, nx.Decode.Instances = 1, 1
	sg := sc.Groups[1]
	sg.Decode.DP = 2
	sc.Groups = []Group{fl, nx, sg}
	return sc
}

func newParser() expfmt.TextParser { return expfmt.NewTextParser(model.UTF8Validation) }

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
