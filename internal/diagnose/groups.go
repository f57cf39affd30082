package diagnose

import (
	"sort"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// GroupVerdict is the verdict of one group of instances that serve
// together (by default: one engine kind, since a prefill/decode pair never
// mixes engines).
type GroupVerdict struct {
	Group    string   `json:"group"`
	Class    Class    `json:"stage"`
	Headline string   `json:"headline"`
	Evidence []string `json:"evidence,omitempty"`
	Notes    []string `json:"notes,omitempty"`
	Traffic  []string `json:"traffic,omitempty"`
	// Prefill, Decode and KV count the instances whose numbers the verdict
	// rests on (KV: those exporting KV bytes).
	Prefill int  `json:"prefill_instances"`
	Decode  int  `json:"decode_instances"`
	KV      int  `json:"kv_instances"`
	HasKV   bool `json:"has_kv"`
	Samples int  `json:"samples"`
}

// GroupOf returns the group an instance belongs to.
type GroupOf func(ip *ledger.InstancePoint) string

// ByEngine groups instances by engine kind.
func ByEngine(ip *ledger.InstancePoint) string {
	if ip.Engine == "" {
		return "unknown"
	}
	return ip.Engine
}

// groupNames lists the groups present anywhere in the window, sorted.
func groupNames(w []ledger.Point, of GroupOf) []string {
	seen := map[string]bool{}
	for i := range w {
		for j := range w[i].Instances {
			// A router is read with the pool it serves, never a group
			// of its own.
			if ip := &w[i].Instances[j]; ip.Role != string(engine.Router) {
				seen[of(ip)] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for g := range seen {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// groupPoints rebuilds the stage sums of one group from the per-instance
// entries, so that the group's KV is compared with its own prefill only and
// divided by its own B_request.
func groupPoints(w []ledger.Point, name string, cfg Config) []ledger.Point {
	return GroupPoints(w, name, cfg.GroupOf, cfg.bytesFor)
}

// GroupPoints is the stage sums of group name at every point of w: its
// instances' rates, queues and KV bytes, and KV req/s by the group's own
// B_request from bytesOf (nil: KV req/s absent). The pools of
// /api/v1/snapshot are these sums at the newest point.
func GroupPoints(w []ledger.Point, name string, of GroupOf, bytesOf func(group string) (float64, string)) []ledger.Point {
	if of == nil {
		of = ByEngine
	}
	bytesPerRequest, whyNot := 0.0, whyNoBytes
	if bytesOf != nil {
		bytesPerRequest, whyNot = bytesOf(name)
	}
	// An instance exports KV bytes if its KV rate was present anywhere in
	// the window: a restart or a failed scrape does not make it a non-exporter.
	exports := map[string]bool{}
	for i := range w {
		for j := range w[i].Instances {
			if ip := &w[i].Instances[j]; of(ip) == name && exportsKV(ip) {
				exports[ip.Target] = true
			}
		}
	}
	out := make([]ledger.Point, len(w))
	for i := range w {
		groupPoint(&out[i], &w[i], name, of, exports, bytesPerRequest, whyNot)
	}
	return out
}

// exportsKV says the instance's KV rate is present at its point: an
// instance that does so anywhere in a window is one of its group's KV
// exporters over that window.
func exportsKV(ip *ledger.InstancePoint) bool {
	return ip.KVBytes.OK() || ip.KVBytesW.OK()
}

// groupPoint sets g to the stage sums of group name at p, with exports the
// group's KV exporters over the window p is judged in and bytesPerRequest
// (or whyNot) its B_request.
func groupPoint(g, p *ledger.Point, name string, of GroupOf, exports map[string]bool, bytesPerRequest float64, whyNot string) {
	*g = ledger.Point{Time: p.Time}
	g.Instances = groupInstances(p.Instances, name, of)
	g.Router = p.RouterOf(name)
	// The group's own pool values, shared with the point, not copied.
	for k := range p.Pools {
		if p.Pools[k].Name == name {
			g.Pools = p.Pools[k : k+1 : k+1]
		}
	}
	var st [2]struct {
		rate, rateW, running, waiting, usage sumN
		prompt, gen                          sumN
		q                                    [4]sumN
		n, up                                int
		missing                              []string
	}
	var kvB, kvBW sumN
	kvN, kvUp := 0, 0
	for j := range p.Instances {
		ip := &p.Instances[j]
		if of(ip) != name {
			continue
		}
		if exports[ip.Target] {
			kvN++
			if ip.KVBytesW.OK() {
				kvUp++
			}
			kvB.add(ip.KVBytes)
			kvBW.add(ip.KVBytesW)
		}
		si := -1
		switch ip.Role {
		case "prefill":
			si = 0
		case "decode":
			si = 1
		}
		if si < 0 {
			continue
		}
		s := &st[si]
		s.n++
		if ip.Up {
			s.up++
		}
		if !ip.Window.OK() {
			s.missing = append(s.missing, ip.Target)
		}
		s.rate.add(ip.Instant)
		s.rateW.add(ip.Window)
		s.running.add(ip.Running)
		s.waiting.add(ip.Waiting)
		s.usage.add(ip.KVUsage)
		s.prompt.add(ip.PromptTPS)
		s.gen.add(ip.GenTPS)
		for k, q := range []ledger.Num{ip.Queues.Bootstrap, ip.Queues.Inflight, ip.Queues.Prealloc, ip.Queues.Transfer} {
			s.q[k].add(q)
		}
	}
	for k, sp := range []*ledger.StagePoint{&g.Prefill, &g.Decode} {
		s := &st[k]
		sp.Instances, sp.Up, sp.Missing = s.n, s.up, s.missing
		sp.Partial = s.rateW.n > 0 && len(s.missing) > 0
		sp.Instant, sp.Window = s.rate.num(), s.rateW.num()
		sp.Running, sp.Waiting = s.running.num(), s.waiting.num()
		sp.KVUsage = s.usage.mean()
		sp.PromptTPS, sp.GenTPS = s.prompt.num(), s.gen.num()
		none := ledger.Absent(whyDeploymentOnly)
		sp.TTFT, sp.ITL, sp.E2E = ledger.Quant{P50: none, P90: none, P99: none}, ledger.Quant{P50: none, P90: none, P99: none}, ledger.Quant{P50: none, P90: none, P99: none}
		sp.Queues = ledger.Queues{Bootstrap: s.q[0].num(), Inflight: s.q[1].num(), Prealloc: s.q[2].num(), Transfer: s.q[3].num()}
	}
	g.KV.Instances, g.KV.Up = kvN, kvUp
	// The copy time is the deployment's: the ledger keeps no
	// per-instance histograms in its points.
	g.KV.XferTime = p.KV.XferTime
	g.KV.Transfers, g.KV.Failures = ledger.Absent(whyDeploymentOnly), ledger.Absent(whyDeploymentOnly)
	g.KV.Partial = kvUp > 0 && kvUp < kvN
	g.KV.BytesInstant, g.KV.BytesWindow = kvB.num(), kvBW.num()
	perReq := func(b ledger.Num) ledger.Num {
		switch {
		case kvN == 0:
			return ledger.Absent("no instance of the group exports KV bytes")
		case !b.OK():
			return b
		case bytesPerRequest <= 0:
			return ledger.Absent(whyNot)
		}
		return ledger.Val(b.V / bytesPerRequest)
	}
	g.KV.Instant, g.KV.Window = perReq(g.KV.BytesInstant), perReq(g.KV.BytesWindow)
}

// whyDeploymentOnly is the reason of a group's value that the ledger keeps
// for the deployment only: its points carry no per-instance histograms or
// transfer counts.
const whyDeploymentOnly = "kept for the deployment only, not per group"

// sumN adds present values; the sum is absent only when every term is.
type sumN struct {
	v   float64
	n   int
	why string
}

func (s *sumN) add(x ledger.Num) {
	if x.OK() {
		s.v += x.V
		s.n++
	} else if s.why == "" {
		s.why = x.Why
	}
}

func (s *sumN) num() ledger.Num {
	if s.n > 0 {
		return ledger.Val(s.v)
	}
	return ledger.Absent(s.why)
}

func (s *sumN) mean() ledger.Num {
	if s.n > 0 {
		return ledger.Val(s.v / float64(s.n))
	}
	return ledger.Absent(s.why)
}

// groupInstances returns the instances of group name, which the verdict
// only reads. Where they are one run of the point's instances (one group,
// or targets listed group by group) that run is returned as is, capped so
// nothing can append into the point: at thousands of instances a copy per
// point and group was most of a verdict's cost.
func groupInstances(all []ledger.InstancePoint, name string, of GroupOf) []ledger.InstancePoint {
	first, last, n := -1, -1, 0
	for j := range all {
		if of(&all[j]) == name {
			if first < 0 {
				first = j
			}
			last = j
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if n == last-first+1 {
		return all[first : last+1 : last+1]
	}
	out := make([]ledger.InstancePoint, 0, n)
	for j := range all {
		if of(&all[j]) == name {
			out = append(out, all[j])
		}
	}
	return out
}
