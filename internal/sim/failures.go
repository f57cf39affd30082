package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// FailureSpec makes a share of a group's KV loads fail; decode then
// computes the failed request's prompt itself, as vLLM does with
// kv_load_failure_policy "recompute" (docs/sim.md#failed-kv-loads). The
// connector counts each failure under its class, and the simulated vLLM
// exports prompt_tokens_by_source_total, whose local_compute on decode is
// the recomputed prefill work.
type FailureSpec struct {
	// Ratio is the share of KV loads that fail, in [0, 1).
	Ratio float64 `yaml:"ratio" json:"ratio,omitempty"`
	// Class is how the connector counts a failure: network (the
	// default), notification (NIXL only) or expiry.
	Class string `yaml:"class" json:"class,omitempty"`
}

// Failure classes of FailureSpec.Class.
const (
	FailNetwork      = "network"
	FailNotification = "notification"
	FailExpiry       = "expiry"
)

// validate checks f for a group of engine eng (its profile prof) and its
// connector.
func (f FailureSpec) validate(prof *Profile, eng, connector string) error {
	switch {
	case f.Ratio > 0 && !prof.RecomputesFailedLoads:
		return notRecomputing(eng)
	case f.Ratio < 0 || f.Ratio >= 1:
		return fmt.Errorf("ratio must be within [0, 1), got %g", f.Ratio)
	case f.Class == FailNotification && connector != ConnectorNIXL:
		return fmt.Errorf("class notification needs the nixl connector")
	}
	switch f.Class {
	case "", FailNetwork, FailNotification, FailExpiry:
		return nil
	}
	return fmt.Errorf("class must be network, notification or expiry, got %q", f.Class)
}

// notRecomputing is the error for failures set on a group of engine eng,
// which does not recompute failed KV loads: it names the engines that do.
func notRecomputing(eng string) error {
	var do []string
	for _, e := range profileEngines() {
		if profileFor(e).RecomputesFailedLoads {
			do = append(do, e)
		}
	}
	switch len(do) {
	case 0:
		return errors.New("no engine recomputes failed KV loads")
	case 1:
		return fmt.Errorf("only the %s engine recomputes failed KV loads, not %s", do[0], eng)
	}
	return fmt.Errorf("only the %s engines recompute failed KV loads, not %s", orList(do), eng)
}

// FailureTruth is what a group's KV loads did, counted where they happen,
// apart from any exposition: the truth the ledger's failure rates are
// checked against.
type FailureTruth struct {
	Loads  uint64 // KV loads that ended, failed or not
	Failed uint64
	// RecomputedTokens are the prompt tokens decode computed itself;
	// DecodePromptTokens every prompt token decode took (recomputed or
	// received).
	RecomputedTokens   uint64
	DecodePromptTokens uint64
}

// failures draws which loads fail, with a generator of its own so that a
// scenario without failures draws exactly what it drew before.
type failures struct {
	rng   *rand.Rand
	truth map[string]*FailureTruth
}

func newFailures(seed int64) failures {
	return failures{rng: rand.New(rand.NewPCG(uint64(seed), 0xbb67ae8584caa73b)), truth: map[string]*FailureTruth{}}
}

func (f *failures) of(g *group) *FailureTruth {
	t := f.truth[g.spec.Name]
	if t == nil {
		t = &FailureTruth{}
		f.truth[g.spec.Name] = t
	}
	return t
}

// FailureTruth returns group's counts so far.
func (m *Model) FailureTruth(group string) FailureTruth {
	if t := m.fails.truth[group]; t != nil {
		return *t
	}
	return FailureTruth{}
}

// loadFails decides whether r's KV load, ending now on copy thread th of
// prefill engine p, failed, and if so counts it where the connector does:
// a failed transfer on the side that counts transfers, a lost notification
// on decode, an expired lease on prefill.
func (m *Model) loadFails(p *engine, r *request, th int) bool {
	g := p.inst.grp
	spec := g.spec.Failures
	t := m.fails.of(g)
	t.Loads++
	if spec.Ratio <= 0 || m.fails.rng.Float64() >= spec.Ratio {
		return false
	}
	t.Failed++
	counter := p
	if g.spec.Connector == ConnectorNIXL && !g.spec.NIXLPush {
		counter = r.d
	}
	kv := func(e *engine) interface {
		RecordFailedTransfer()
		RecordFailedRecv()
		RecordExpiredReq()
	} {
		return e.stats.kv.Thread(th % e.stats.kv.Threads())
	}
	switch spec.Class {
	case FailNotification:
		// Since PR #55854 the connector counts a lost notification within
		// its failed transfers (a grouped transport counter) too.
		kv(r.d).RecordFailedRecv()
		kv(counter).RecordFailedTransfer()
	case FailExpiry:
		kv(p).RecordExpiredReq()
	default:
		kv(counter).RecordFailedTransfer()
	}
	r.recompute = true
	return true
}

// recomputeNs is how long decode engine d takes to compute one prompt
// itself: at its group's prefill speed, chunked into its steps.
func (m *Model) recomputeNs(d *engine) int64 {
	return secsToNs(float64(m.sc.InputTokens) / d.inst.grp.spec.Prefill.TokensPerSec)
}

// decodePrompt counts a request's prompt on decode engine d at its first
// token: recomputed there, or received as KV.
func (m *Model) decodePrompt(d *engine, r *request) {
	t := m.fails.of(d.inst.grp)
	t.DecodePromptTokens += uint64(m.sc.InputTokens)
	if r.recompute {
		d.stats.Recomputed += uint64(m.sc.InputTokens)
		t.RecomputedTokens += uint64(m.sc.InputTokens)
	}
}

// nextStepNs is the length of decode engine d's next step: one forward
// pass, plus the prompts of the requests it admitted for recompute.
func (m *Model) nextStepNs(d *engine) int64 {
	ns := int64(d.inst.grp.spec.Decode.Step(len(d.running)))
	d.stepTokens = len(d.running) // a token each
	for _, r := range d.running {
		if r.recompute && !r.recomputed {
			r.recomputed = true
			ns += m.recomputeNs(d)
			d.stepTokens += m.sc.InputTokens // and the prompt it computes
		}
	}
	d.stepNs = ns
	return ns
}

// vllmBySource prints vllm:prompt_tokens_by_source_total for a group with
// failed loads (vLLM with PR #33290): on prefill every prompt token is
// computed there; on decode local_compute is what it recomputed and
// external_kv_transfer what arrived as KV. No prefix cache: no hits.
func vllmBySource(dst []byte, v *InstanceView) []byte {
	if v.Group.Failures.Ratio <= 0 {
		return dst
	}
	const name, help = "vllm:prompt_tokens_by_source", "Number of prompt tokens by source."
	var lb [2]label
	sources := func(s *EngineStats) [3]float64 { // local_cache_hit, local_compute, external_kv_transfer
		if v.Role == RoleDecode {
			return [3]float64{0, float64(s.Recomputed), float64(s.PromptTokens - s.Recomputed)}
		}
		return [3]float64{0, float64(s.PromptTokens), 0}
	}
	names := [3]string{"local_cache_hit", "local_compute", "external_kv_transfer"}
	dst = appendHeader(dst, name+"_total", help, "counter")
	for _, s := range v.Engines {
		n := sources(s)
		for i, src := range names {
			dst = appendSample(dst, name, "_total", vllmBase(v, s, &lb), n[i], label{"source", src})
		}
	}
	dst = appendHeader(dst, name+"_created", help, "gauge")
	for _, s := range v.Engines {
		for _, src := range names {
			dst = appendSample(dst, name, "_created", vllmBase(v, s, &lb), s.Created, label{"source", src})
		}
	}
	return dst
}
