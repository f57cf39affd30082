package advice

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/slo"
)

// SLOReport is the SLO attainment over the ledger's window, per role. The
// decode role's is the deployment's: requests complete there, so its
// goodput is the deployment's goodput (docs/advisor.md#slo-attainment).
type SLOReport struct {
	Thresholds slo.Thresholds `json:"thresholds"`
	Seconds    float64        `json:"window_seconds"`
	// Request is the whole request's attainment, what a user sees: from
	// the router, from decode instances that time from the arrival, or a
	// bound over the two legs; never the decode leg's alone
	// (docs/advisor.md#the-whole-requests-slo). Its reader sets it, pool
	// by pool (slo.AttainRequest, slo.Mix): one window's buckets of
	// several pools would add one pool's prefill leg to another's decode.
	Request *slo.Attainment   `json:"request,omitempty"`
	Decode  *slo.Attainment   `json:"decode"`
	Prefill *slo.Attainment   `json:"prefill"`
	Absent  map[string]string `json:"absent,omitempty"`
}

// Attainment reads th against the window's histograms. Where no instance
// of a role exports a histogram, the SLO is absent with that reason.
func Attainment(th slo.Thresholds, b ledger.Buckets) (SLOReport, error) {
	if err := th.Check(); err != nil {
		return SLOReport{}, err
	}
	r := SLOReport{Thresholds: th, Seconds: b.Seconds}
	phases := map[string]slo.Hist{}
	for _, p := range []struct {
		name string
		hs   []slo.Hist
	}{
		{"prefill_queue", b.Prefill.Queue}, {"prefill", b.Prefill.Prefill}, {"bootstrap", b.Prefill.Bootstrap}, {"kv_transfer", b.KVXfer},
		{"decode_queue", b.Decode.Queue}, {"decode", b.Decode.Decode},
	} {
		if len(p.hs) > 0 {
			phases[p.name] = slo.Merge(p.hs...)
		}
	}
	absent := func(k, why string) {
		if r.Absent == nil {
			r.Absent = map[string]string{}
		}
		r.Absent[k] = why
	}
	for _, role := range []struct {
		name string
		rb   ledger.RoleBuckets
		dst  **slo.Attainment
		ph   map[string]slo.Hist
	}{{"decode", b.Decode, &r.Decode, phases}, {"prefill", b.Prefill, &r.Prefill, nil}} {
		if role.rb.Up == 0 {
			absent(role.name, "no "+role.name+" instance up")
			continue
		}
		a, err := slo.Attain(th, slo.Input{TTFT: role.rb.TTFT, ITL: role.rb.ITL, E2E: role.rb.E2E, Phases: role.ph, Rate: role.rb.E2ERate, Seconds: b.Seconds})
		if err != nil {
			return SLOReport{}, err
		}
		lists := map[string][]slo.Hist{"ttft": role.rb.TTFT, "itl": role.rb.ITL, "e2e": role.rb.E2E}
		for i, m := range a.Metrics {
			if len(lists[m.Name]) == 0 {
				a.Metrics[i].Absent = fmt.Sprintf("no %s instance exports the %s histogram", role.name, strings.ToUpper(m.Name))
			}
		}
		*role.dst = &a
	}
	if len(phases) == 0 {
		absent("misses", "no engine exports per-phase histograms (queue, prefill, decode, KV transfer time)")
	}
	return r, nil
}

// PoolAttainment is one pool's SLO report: Attainment over the pool's own
// buckets, with the whole request's attainment from its own router or
// legs.
func PoolAttainment(th slo.Thresholds, b ledger.Buckets) (SLOReport, error) {
	rep, err := Attainment(th, b)
	if err != nil {
		return SLOReport{}, err
	}
	req, err := slo.AttainRequest(th, b.Request)
	if err != nil {
		return SLOReport{}, err
	}
	rep.Request = &req
	return rep, nil
}

// RequestAttainment is the deployment's whole-request attainment over a
// window: with fewer than two pools, from the window's buckets whole;
// else each pool's from its own buckets (a prefill leg of one pool never
// adds to a decode leg of another), mixed by their observations
// (slo.Mix). The live API and the report of a recording both read it so.
func RequestAttainment(th slo.Thresholds, whole ledger.Buckets, pools map[string]ledger.Buckets) (slo.Attainment, error) {
	if len(pools) < 2 {
		return slo.AttainRequest(th, whole.Request)
	}
	names := make([]string, 0, len(pools))
	for n := range pools {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]slo.Attainment, 0, len(names))
	for _, n := range names {
		a, err := slo.AttainRequest(th, pools[n].Request)
		if err != nil {
			return slo.Attainment{}, err
		}
		parts = append(parts, a)
	}
	return slo.Mix(names, parts), nil
}
