package ledger

import "github.com/ptdmon/ptdmon/internal/engine"

// failureSum adds up one pool's failure and transfer counters.
type failureSum struct {
	transfers              sum
	classes                [5]sum // engine.FailureMetrics' order
	computed, decodePrompt sum
	decodeCount            int
	// shed: load turned away before the engine queue, by the pool's
	// routers and engines alike (a request a router sheds never reaches
	// an engine, so the two never count one request twice).
	shed sum
	// migrated: requests a router sent again to another worker.
	migrated sum
}

// add adds one instance: its KV failures and transfers where its KV
// counts (a transfer library's beside an engine's connector counts the
// same transfers), its locally computed prompt tokens where it decodes.
// A target down or stale adds the reason its values are absent.
func (s *failureSum) add(in *instanceRead, kr *kvRates, kvCounts bool) {
	t := in.t
	if t.has(engine.Shed) {
		s.shed.add(in.windowed(engine.Shed))
	}
	if t.has(engine.Migrated) {
		s.migrated.add(in.windowed(engine.Migrated))
	}
	if kvCounts {
		if t.has(engine.KVTransfers) {
			s.transfers.add(kr.transfers)
		}
		for i, m := range engine.FailureMetrics() {
			if t.has(m) {
				s.classes[i].add(kr.failures[i])
			}
		}
	}
	if in.role == engine.Decode {
		s.decodeCount++
		if t.has(engine.PromptTokensComputed) {
			s.computed.add(in.windowed(engine.PromptTokensComputed))
			s.decodePrompt.add(in.windowed(engine.PromptTokens))
		}
	}
}

// whyNoClass says which sources count a class, for a pool none of whose
// targets does.
var whyNoClass = map[engine.FailureClass]string{
	engine.FailNetwork:      "no target of the pool counts network failures (vLLM's FlagCX, NIXL and Mooncake connectors, NIXL telemetry and the Mooncake transfer engine do)",
	engine.FailTimeout:      "no target of the pool counts transfer timeouts (SGLang does)",
	engine.FailExpiry:       "no target of the pool counts expired KV leases (vLLM's FlagCX, NIXL and Mooncake connectors do)",
	engine.FailNotification: "no target of the pool counts failed notifications (vLLM's NIXL connector does)",
	engine.FailUnclassified: "no target of the pool counts failures without a class (SGLang, Dynamo and NIXL telemetry do)",
}

// whyNoShedCounter is the shed load's reason where no target of a pool
// counts any.
const whyNoShedCounter = "no target of the pool counts load shed before the engine (llm-d's flow control, the SGLang gateway, Dynamo's frontend, SGLang's queue rejections and vLLM's admission rejections do)"

// whyNoMigrationCounter is the migrations' reason where no target of a
// pool counts any.
const whyNoMigrationCounter = "no router of the pool counts requests sent again to another worker (Dynamo's frontend counts its migrations, the SGLang gateway its retries)"

// offeredRates are the pool's shed load, with its share of the offered
// load, served + shed, and its migrated requests, with their share of the
// requests sent to workers, served + migrated; served is decode's windowed
// completions (every request a pool serves ends on decode), else
// prefill's. Migrations come in bursts as a worker goes while completions
// stall: over the offered load their share could pass 1.
func (s *failureSum) offeredRates(decode, prefill Num) (shed, migrated FailureRate) {
	served := decode
	if !served.OK() {
		served = prefill
	}
	plus := func(n Num) Num {
		if n.OK() && served.OK() {
			return Val(served.V + n.V)
		}
		return served
	}
	const none = "no load offered in the window"
	n, m := s.shed.num(whyNoShedCounter), s.migrated.num(whyNoMigrationCounter)
	return FailureRate{PerSecond: n, Ratio: ratio(n, plus(n), none)}, FailureRate{PerSecond: m, Ratio: ratio(m, plus(m), none)}
}

// point is the pool's failures over the window.
func (s *failureSum) point() Failures {
	var f Failures
	f.Transfers = s.transfers.num("no target of the pool counts KV transfers")
	// The attempts: transfers counted plus every class's failures, each
	// where present; absent only when nothing was counted at all.
	var attempts sum
	attempts.add(f.Transfers)
	for i, m := range engine.FailureMetrics() {
		c, _ := m.FailureClass()
		n := s.classes[i].num(whyNoClass[c])
		if c.InTotal() {
			attempts.add(n)
		}
		f.Kind(FailureKind(c)).PerSecond = n
	}
	all := attempts.num("no target of the pool counts KV transfers or their failures")
	for _, m := range engine.FailureMetrics() {
		c, _ := m.FailureClass()
		r := f.Kind(FailureKind(c))
		r.Ratio = ratio(r.PerSecond, all, "no KV transfer attempted in the window")
	}
	if s.decodeCount == 0 {
		f.Recomputed = FailureRate{PerSecond: Absent("the pool has no decode instance"), Ratio: Absent("the pool has no decode instance")}
	} else {
		why := "no decode instance of the pool counts prompt tokens by source (vLLM's prompt_tokens_by_source_total)"
		n := s.computed.num(why)
		f.Recomputed = FailureRate{PerSecond: n, Ratio: ratio(n, s.decodePrompt.num(why), "no prompt tokens on decode in the window")}
	}
	return f
}

// ratio is part ÷ whole; absent when either is, or when whole is 0.
func ratio(part, whole Num, whyZero string) Num {
	switch {
	case !part.OK():
		return part
	case !whole.OK():
		return whole
	case whole.V <= 0:
		return Absent(whyZero)
	}
	return Val(part.V / whole.V)
}
