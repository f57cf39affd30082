package sim

import (
	"encoding/json"
	"testing"
	"time"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// TensorRT-LLM exports its own batch limit: trtllm_max_num_active_requests
// is the worker's ranks' maxNumActiveRequests added, on decode the limit
// MaxNumSeqs gives, and prefill_batch_occupancy the newest iteration's
// context requests over it. The JSON iteration statistics carry each
// rank's limit.
func TestTRTLLMExportsItsBatchLimit(t *testing.T) {
	sc := baseScenario()
	sc.Groups = sc.Groups[:1]
	g := &sc.Groups[0]
	g.Name, g.Engine, g.Connector = "trt", string(ptd.TensorRTLLM), ConnectorUCX
	g.Prefill.DP, g.Decode.DP = 2, 2
	g.Rate = 8
	m, err := NewModel(sc, 3, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	m.AdvanceTo(20 * time.Second)
	for _, c := range []struct {
		name, role string
		limit      int
	}{{"trt-p0", RolePrefill, 2 * g.Prefill.MaxBatch}, {"trt-d0", RoleDecode, 2 * g.Decode.MaxBatch}} {
		if c.role == RoleDecode && m.MaxNumSeqs(c.name) != c.limit {
			t.Errorf("%s: MaxNumSeqs %d, want %d", c.name, m.MaxNumSeqs(c.name), c.limit)
		}
		body, f, err := m.Exposition(c.name, nil)
		if err != nil {
			t.Fatal(err)
		}
		o, err := ptd.NewReader(ptd.TensorRTLLM, ptd.Role(c.role), ptd.KVAuto).Read(body, f.ContentType())
		if err != nil {
			t.Fatal(err)
		}
		k := ptd.MaxActiveRequests.GaugeIndex()
		if !o.HasGauges[k] || o.Gauges[k] != float64(c.limit) {
			t.Errorf("%s: max_active_requests %v (present %v), want %d", c.name, o.Gauges[k], o.HasGauges[k], c.limit)
		}
		fams := parseExpo(t, body)
		ctx := fams["trtllm_num_context_requests"].GetMetric()[0].GetGauge().GetValue()
		occ := fams["trtllm_prefill_batch_occupancy"].GetMetric()[0].GetGauge().GetValue()
		if occ != ctx/float64(c.limit) {
			t.Errorf("%s: prefill_batch_occupancy %v, want %v / %d", c.name, occ, ctx, c.limit)
		}
		js, err := m.IterationStats(c.name, nil)
		if err != nil {
			t.Fatal(err)
		}
		var recs []struct {
			MaxNumActiveRequests int `json:"maxNumActiveRequests"`
		}
		if err := json.Unmarshal(js, &recs); err != nil || len(recs) == 0 {
			t.Fatalf("%s: %d records, %v", c.name, len(recs), err)
		}
		if recs[0].MaxNumActiveRequests != c.limit/2 {
			t.Errorf("%s: maxNumActiveRequests %d per rank, want %d", c.name, recs[0].MaxNumActiveRequests, c.limit/2)
		}
	}
}
