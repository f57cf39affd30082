package sim

import (
	"strconv"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// A router's own time (docs/sim.md#what-is-modelled): a group with a router
// may set RouterDelay, the mean of an exponential time each arrival spends
// in the router before it is dispatched (llm-d's flow-control queue,
// Dynamo's preprocessing). Its decisions (decode-only, shed, the engine)
// are taken at dispatch, and the engines time the request from then: their
// queue, TTFT and E2E histograms start at the dispatch, as a real engine's
// start when it receives the request. The router times its own part:
// llm-d's flow_control_request_queue_duration_seconds by outcome, Dynamo's
// stage_duration_seconds{stage="preprocess"} and its TTFT from the
// arrival. Without RouterDelay nothing is drawn or exported, so such runs
// are as before.

// routerTimes are a router's histograms, kept where its group sets a
// router delay.
type routerTimes struct {
	// llm-d's flow control, from enqueue to the outcome.
	dispatched, rejected Histogram
	// Dynamo's frontend: preprocess before dispatch, and the TTFT its
	// clients see.
	preprocess, ttft Histogram
}

// llm-d's flow-control queue duration buckets
// (pkg/epp/metrics/llm_d_router_metrics.go @ebab6879).
var eppQueueBuckets = newGoTable(0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)

// Dynamo's frontend stage buckets (frontend_perf, @04070c75) and its TTFT
// buckets (log-spaced from 0, rounded to two figures, as
// generate_log_buckets makes them by default).
var (
	dynamoStageBuckets = newGoTable(0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 2.5, 5.0)
	dynamoTTFTBuckets  = newGoTable(0, 0.0022, 0.0047, 0.01, 0.022, 0.047, 0.1, 0.22, 0.47, 1, 2.2, 4.7, 10, 22, 48, 100, 220, 480)
)

// newGoTable is a bucket table whose `le` values print as client_golang
// and Rust's prometheus crate print them (1, not Python's 1.0).
func newGoTable(bounds ...float64) *bucketTable {
	t := &bucketTable{bounds: bounds, le: make([]string, len(bounds)+1)}
	for i, b := range bounds {
		t.le[i] = strconv.FormatFloat(b, 'g', -1, 64)
	}
	t.le[len(bounds)] = "+Inf"
	return t
}

// validateRouterDelay checks RouterDelay: not negative, and a router to
// spend it in.
func (g Group) validateRouterDelay(path string, bad func(string, string, ...any) error) error {
	switch {
	case g.RouterDelay < 0:
		return bad(path+".router_delay", "must be >= 0")
	case g.RouterDelay > 0 && g.Router == "":
		return bad(path+".router_delay", "needs a router")
	}
	return nil
}

// holdInRouter keeps an arrival in its group's router for an exponential
// time around RouterDelay, and says whether it did; dispatchRequest sends
// it on then.
func (m *Model) holdInRouter(r *request) bool {
	mean := r.grp.spec.RouterDelay
	if mean <= 0 {
		return false
	}
	if r.grp.route.times == nil {
		g := r.grp
		g.route.times = &routerTimes{
			dispatched: newHistogram(eppQueueBuckets), rejected: newHistogram(eppQueueBuckets),
			preprocess: newHistogram(dynamoStageBuckets), ttft: newHistogram(dynamoTTFTBuckets),
		}
	}
	at := m.now + secsToNs(m.rng.ExpFloat64()*mean)
	m.schedule(&event{t: at, kind: evDispatch, req: r})
	return true
}

// routerDispatched times r's first dispatch in its router's histograms:
// llm-d's queue duration by outcome (shed: rejected for capacity),
// Dynamo's preprocess stage.
func (m *Model) routerDispatched(r *request, shed bool) {
	t := r.grp.route.times
	if t == nil {
		return
	}
	wait := float64(r.routed-r.arrival) / 1e9
	switch {
	case r.grp.spec.Router == string(ptd.DynamoFrontend):
		t.preprocess.observe(wait)
	case shed:
		t.rejected.observe(wait)
	default:
		t.dispatched.observe(wait)
	}
}

// routerFirstToken times r's first token as Dynamo's frontend does, from
// the request's arrival at it.
func (m *Model) routerFirstToken(r *request) {
	if t := r.grp.route.times; t != nil && r.grp.spec.Router == string(ptd.DynamoFrontend) {
		t.ttft.observe(float64(r.firstTok-r.arrival) / 1e9)
	}
}

// appendRouterHist appends one child of a router's histogram as
// client_golang and Rust's prometheus crate write it: labels as given,
// `le` last, integer counts.
func appendRouterHist(dst []byte, name string, base []label, h *Histogram) []byte {
	var lb [8]label
	ls := append(lb[:0], base...)
	var acc uint64
	for i, le := range h.tbl.le {
		acc += h.counts[i]
		dst = appendRouterName(dst, name, "_bucket", append(ls, label{"le", le}))
		dst = append(strconv.AppendUint(dst, acc, 10), '\n')
	}
	dst = append(strconv.AppendFloat(appendRouterName(dst, name, "_sum", ls), h.sum, 'g', -1, 64), '\n')
	return append(strconv.AppendUint(appendRouterName(dst, name, "_count", ls), h.count, 10), '\n')
}

// appendRouterName appends a sample's name and its labels in the order
// given (appendLabels without extra pairs keeps it), and the space before
// its value.
func appendRouterName(dst []byte, name, suffix string, ls []label) []byte {
	dst = append(append(dst, name...), suffix...)
	return append(appendLabels(dst, ls), ' ')
}

// renderEPPQueue appends llm-d's flow-control queue duration, a child
// per outcome once observed (labels sorted, as client_golang writes them).
func renderEPPQueue(dst []byte, g *group, model string) []byte {
	t := g.route.times
	if t == nil || t.dispatched.count+t.rejected.count == 0 {
		return dst
	}
	const name = "llm_d_epp_flow_control_request_queue_duration_seconds"
	dst = appendHeader(dst, name, "[ALPHA] Distribution of the total time requests spend in the EPP flow control layer, measured from the start of the EnqueueAndWait call until a final outcome is reached.", "histogram")
	for _, c := range [...]struct {
		outcome string
		h       *Histogram
	}{{"Dispatched", &t.dispatched}, {"RejectedCapacity", &t.rejected}} {
		if c.h.count == 0 {
			continue
		}
		dst = appendRouterHist(dst, name, []label{{"fairness_id", "default-flow"}, {"inference_pool", g.spec.Name}, {"model_name", model},
			{"outcome", c.outcome}, {"priority", "0"}, {"target_model_name", model}}, c.h)
	}
	return dst
}

// renderDynamoTimes appends Dynamo's frontend TTFT and its preprocess
// stage, once observed.
func renderDynamoTimes(dst []byte, g *group, model string) []byte {
	t := g.route.times
	if t == nil {
		return dst
	}
	if t.ttft.count > 0 {
		const name = "dynamo_frontend_time_to_first_token_seconds"
		dst = appendHeader(dst, name, "Time to first token in seconds", "histogram")
		dst = appendRouterHist(dst, name, []label{{"model", model}}, &t.ttft)
	}
	if t.preprocess.count > 0 {
		const name = "dynamo_frontend_stage_duration_seconds"
		dst = appendHeader(dst, name, "Duration of each frontend pipeline stage in seconds", "histogram")
		dst = appendRouterHist(dst, name, []label{{"stage", "preprocess"}}, &t.preprocess)
	}
	return dst
}
