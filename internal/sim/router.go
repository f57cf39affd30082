package sim

import (
	"fmt"
	"slices"
	"time"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// Routers: a group may put a router in front of its instances
// (Group.Router) and send a share of its requests straight to decode
// (Group.DecodeOnlyFraction), as conditional disaggregation does: those
// requests skip prefill and the KV transfer. The router is an endpoint of
// its own, "<group>-router" (docs/engines.md#routers): llm-d's EPP exports
// its request counter and its P/D decisions; Dynamo's frontend counts each
// request once, when it is answered.

// RouterEngines are the routers a group may name.
var RouterEngines = []string{string(ptd.LLMDEPP), string(ptd.DynamoFrontend)}

// RoleRouter is the role of a router instance.
const RoleRouter = "router"

// routing is a group's router state: the times of its arrivals and of its
// decisions, so that the truth is exact at any instant.
type routing struct {
	arrivals, decodeOnly, remote []int64
	answered                     []int64 // completed on decode
	// times: the router's own histograms, where the group sets a router
	// delay (router_time.go).
	times *routerTimes
	// newRequest, ongoing: Dynamo's migrations, by type (migrate.go).
	newRequest, ongoing []int64
}

// routerName is the router instance of group g.
func routerName(g Group) string { return g.Name + "-router" }

// validateRouting checks the group's router and decode-only fields.
func (g Group) validateRouting(path string, bad func(string, string, ...any) error) error {
	if g.DecodeOnlyFraction < 0 || g.DecodeOnlyFraction >= 1 {
		return bad(path+".decode_only_fraction", "must be within [0, 1)")
	}
	if p := profileFor(g.Engine); g.DecodeOnlyFraction > 0 && p != nil && p.NoDecodeOnly {
		return bad(path+".decode_only_fraction", "is not simulated for %s", g.Engine)
	}
	if g.Router != "" && !slices.Contains(RouterEngines, g.Router) {
		return bad(path+".router", "must be %s, got %q", orList(RouterEngines), g.Router)
	}
	return nil
}

// routed records an arrival at g's router and decides whether it goes
// straight to decode. Nothing is kept for a group without a router or a
// decode-only share, and no random draw is made without the share, so
// such runs are as before.
func (m *Model) routed(g *group) (decodeOnly bool) {
	if g.spec.Router == "" && g.spec.DecodeOnlyFraction == 0 {
		return false
	}
	g.route.arrivals = append(g.route.arrivals, m.now)
	if f := g.spec.DecodeOnlyFraction; f > 0 && m.rng.Float64() < f {
		g.route.decodeOnly = append(g.route.decodeOnly, m.now)
		return true
	}
	g.route.remote = append(g.route.remote, m.now)
	return false
}

// routerAnswered records a request of g completed on decode, as a router
// that counts answers sees it.
func (m *Model) routerAnswered(g *group) {
	if g.spec.Router != "" || g.spec.DecodeOnlyFraction > 0 {
		g.route.answered = append(g.route.answered, m.now)
	}
}

// sendToDecode hands a decode-only request to a decode engine; it is
// ready as soon as the engine gives it a KV slot.
func (m *Model) sendToDecode(g *group, r *request) {
	d := pick(g.decode, &g.rrD, decodeLoad)
	if d == nil {
		m.dropped++
		return
	}
	r.decodeOnly = true
	r.d, r.dGen, r.dSubmit = d, d.gen, m.now
	d.prealloc = append(d.prealloc, r)
	m.kickAlloc(d)
}

// readyLocal puts a decode-only request that got its slot in the batch's
// queue: there is no KV to wait for.
func (m *Model) readyLocal(d *engine, r *request) {
	r.dReady = m.now
	d.ready = append(d.ready, r)
	m.kickDecode(d)
}

// routerOf is the group whose router is the named instance, or nil.
func (m *Model) routerOf(name string) *group {
	for _, g := range m.groups {
		if g.spec.Router != "" && routerName(g.spec) == name {
			return g
		}
	}
	return nil
}

// routerInfos are the router instances, after the engines' instances.
func (m *Model) routerInfos() []InstanceInfo {
	var out []InstanceInfo
	for _, g := range m.groups {
		if g.spec.Router != "" {
			out = append(out, InstanceInfo{Name: routerName(g.spec), Role: RoleRouter, Engine: g.spec.Router})
		}
	}
	return out
}

// profileOf is the named instance's engine profile; nil for a router,
// whose metrics are at /metrics.
func (m *Model) profileOf(name string) *Profile {
	if in := m.byName[name]; in != nil {
		return in.grp.prof
	}
	return nil
}

// RouterTruth is a group's router at an instant: every arrival and every
// P/D decision so far.
type RouterTruth struct {
	Group         string `json:"group"`
	Arrivals      int64  `json:"arrivals"`
	DecodeOnly    int64  `json:"decode_only"`
	RemotePrefill int64  `json:"remote_prefill"`
	// Answered: requests completed on decode.
	Answered int64 `json:"answered"`
}

// routerTruth is the routing truth of the groups with a router or a
// decode-only share, at t.
func (m *Model) routerTruth(t int64) []RouterTruth {
	var out []RouterTruth
	for _, g := range m.groups {
		if g.spec.Router == "" && g.spec.DecodeOnlyFraction == 0 {
			continue
		}
		out = append(out, RouterTruth{Group: g.spec.Name,
			Arrivals:      int64(countAt(g.route.arrivals, t)),
			DecodeOnly:    int64(countAt(g.route.decodeOnly, t)),
			RemotePrefill: int64(countAt(g.route.remote, t)),
			Answered:      int64(countAt(g.route.answered, t))})
	}
	return out
}

// routerFormat writes a router's exposition. A router has no engines: it
// renders its group's routing.
type routerFormat struct {
	m *Model
	g *group
}

func (routerFormat) ContentType() string { return textContentType }

func (f routerFormat) Render(dst []byte, _ *InstanceView) []byte {
	if f.g.spec.Router == string(ptd.DynamoFrontend) {
		return f.m.renderDynamoFrontend(f.g, dst)
	}
	return f.m.renderRouter(f.g, dst)
}

// renderDynamoFrontend appends Dynamo's frontend exposition
// (lib/runtime/src/metrics/prometheus_names.rs, frontend_service): every
// request counted once when answered, by status.
func (m *Model) renderDynamoFrontend(g *group, dst []byte) []byte {
	model := g.spec.ModelOf(m.sc)
	base := []label{{"endpoint", "chat_completions"}, {"model", model}, {"request_type", "stream"}}
	dst = appendHeader(dst, "dynamo_frontend_requests_total", "Total number of LLM requests processed", "counter")
	dst = appendSample(dst, "dynamo_frontend_requests_total", "", base, float64(countAt(g.route.answered, m.now)), label{"status", "success"})
	if g.spec.MaxQueued > 0 && countAt(g.shed.shed, m.now) > 0 {
		// Shed with 503: an error of error_type="overload", a child the
		// frontend makes at its first increment.
		dst = appendSample(dst, "dynamo_frontend_requests_total", "", []label{{"endpoint", "chat_completions"}, {"error_type", "overload"}, {"model", model}, {"request_type", "stream"}},
			float64(countAt(g.shed.shed, m.now)), label{"status", "error"})
	}
	dst = renderDynamoTimes(dst, g, model)
	return renderMigrations(dst, g, model, m.now)
}

// renderRouter appends llm-d's EPP exposition (llm-d/llm-d-router
// pkg/epp/metrics/llm_d_router_metrics.go and the disagg profile handler's
// metrics.go) at m.now, as client_golang writes it: labels sorted.
func (m *Model) renderRouter(g *group, dst []byte) []byte {
	model := g.spec.ModelOf(m.sc)
	n := func(ts []int64) float64 { return float64(countAt(ts, m.now)) }
	req := []label{{"fairness_id", "default-flow"}, {"model_name", model}, {"priority", "0"}, {"target_model_name", model}}
	dst = appendHeader(dst, "llm_d_epp_request_total", "[ALPHA] Total number of processed requests.", "counter")
	dst = appendSample(dst, "llm_d_epp_request_total", "", req, n(g.route.arrivals))
	dec := []label{{"model_name", model}, {"plugin_name", "disagg-profile-handler"}, {"plugin_type", "disagg-profile-handler"}}
	dst = appendHeader(dst, "llm_d_epp_disagg_decision_total", "[ALPHA] Total number of disaggregation routing decisions made", "counter")
	dst = appendSample(dst, "llm_d_epp_disagg_decision_total", "", dec, n(g.route.decodeOnly), label{"decision_type", "decode-only"})
	dst = appendSample(dst, "llm_d_epp_disagg_decision_total", "", dec, n(g.route.remote), label{"decision_type", "prefill-decode"})
	if g.spec.MaxQueued > 0 {
		// Flow control's outcomes (shed.go): the requests it let through
		// to prefill, and those it rejected for capacity.
		const fc = "llm_d_epp_flow_control_requests_total"
		dst = appendHeader(dst, fc, "[ALPHA] Total number of requests processed by the flow controller, by final outcome.", "counter")
		fl := func(outcome string) []label {
			return []label{{"fairness_id", "default-flow"}, {"inference_pool", g.spec.Name}, {"model_name", model}, {"outcome", outcome}, {"priority", "0"}}
		}
		shed := n(g.shed.shed)
		dst = appendSample(dst, fc, "", fl("Dispatched"), n(g.shed.offered)-shed)
		if shed > 0 {
			// client_golang makes a vector's child at its first use.
			dst = appendSample(dst, fc, "", fl("RejectedCapacity"), shed)
		}
	}
	return renderEPPQueue(dst, g, model)
}

// routerExposition is Exposition for a router instance.
func (m *Model) routerExposition(g *group, dst []byte) ([]byte, Format, error) {
	if !slices.Contains(RouterEngines, g.spec.Router) {
		return dst, nil, fmt.Errorf("router %q is not simulated", g.spec.Router)
	}
	f := routerFormat{m, g}
	return f.Render(dst, nil), f, nil
}

// RouterArrivals is the number of requests g's router received by d.
func (m *Model) RouterArrivals(group string, d time.Duration) int64 {
	for _, g := range m.groups {
		if g.spec.Name == group {
			return int64(countAt(g.route.arrivals, min(int64(d), m.now)))
		}
	}
	return 0
}
