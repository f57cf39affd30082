package diagnose

import "fmt"

// decide applies the queueing rule (docs/web.md#the-verdict): the bottleneck is a stage at its
// capacity with the queue in front of it backing up. Congestion propagates
// upstream through bounded KV slots (a slow decode parks KV on prefill,
// which then stalls), so stages are examined downstream first and the most
// downstream stage with its own evidence of being at capacity wins.
func decide(v *Verdict, s signals, th Thresholds) {
	add := func(e string) { v.Evidence = append(v.Evidence, e) }
	// bytes ÷ B_request is a request rate only when a transfer carries
	// B_request; otherwise rate gaps involving KV are not evidence.
	kvShort := s.kvPrefill.known && s.kvPrefill.shortfall && !s.bytesSkew
	// A KV shortfall in fewer ticks (a restart in the window) still counts
	// when a queue in front of KV corroborates it: two weaker signals
	// agreeing outweigh one.
	kvQueued := s.pKVTr.Rise >= th.KVRise/2 && s.pKVTr.persists() || s.dWaitHeld && s.dPinned == 0
	if !kvShort && s.kvPrefill.known && !s.bytesSkew && !s.kvPrefill.catching && kvQueued {
		g := s.kvPrefill
		kvShort = g.rel() >= th.RateGap && g.up-g.own >= th.RateGapAbs && g.below >= th.Persist-0.15
	}
	decShort := s.decodeKV.known && s.decodeKV.shortfall && !s.bytesSkew
	// Decode at capacity: its batch pinned at the limit on at least half of
	// the decode instances that report one.
	decodeFull := s.dPinned > 0 && 2*s.dPinned >= s.dReporting
	// Requests backing up in front of decode: waiting for its batch or for
	// a decode KV slot. A steady batch alone is not enough: a saturated
	// prefill feeds decode at an even pace. SGLang's prealloc queue is not
	// such a backlog either: it grows whenever decode KV slots are held,
	// whoever holds them.
	backlog := s.dWait.grow || s.dWaitHeld
	// A prefill that cannot hand its KV off: requests sit for seconds
	// waiting for their KV to leave (Little's law on the inflight queue), or
	// stay parked in its KV cache; whatever waits in front of prefill then
	// waits because the finished requests hold the slots.
	blocked := s.inflHeld || s.pKVFull
	// KV piling up in front of the link, on prefill.
	kvPiles := s.pKVGrow || s.pKVFull || s.inflHeld || s.infl.grow
	// Decode waiting that holds seconds of throughput while decode has room
	// is requests waiting for their KV (vLLM and TensorRT-LLM count
	// requests awaiting remote KV as waiting): the link's doing when KV also
	// piles up on prefill or trails it; alone it may be slow copies.
	// (KV trailing prefill on average counts as that corroboration even
	// when bursts keep it from trailing in most ticks.)
	kvLags := s.kvPrefill.known && !s.bytesSkew && s.kvPrefill.rel() >= th.RateGap && s.kvPrefill.up-s.kvPrefill.own >= th.RateGapAbs
	// Held four times as long as a holding queue needs, it stands alone:
	// copies that slow would themselves be the link at its limit.
	longWait := s.dWaitSeconds-s.copySecs >= 4*th.HoldSeconds
	awaitingKV := s.dWaitHeld && !decodeFull && s.dReporting > 0 && (kvPiles || kvShort || kvLags || longWait)
	// The KV-admission limit (vLLM, docs/web.md#the-verdict): a request
	// takes its decode KV blocks before its KV moves and holds them while
	// it arrives (deferred), so decode's KV cache caps the transfers in
	// flight. The cache is full, requests wait for blocks (capacity), the
	// batch has room, and the deferred ones wait about one copy each: the
	// link keeps up, neither it nor decode compute is the limit.
	kvAdmission := s.dByReason && !decodeFull && s.dKVFull && (s.dCap.grow || s.dCapHeld) &&
		s.dDeferred >= 1 && s.copySecs > 0 && s.dDeferredSecs-s.copySecs < th.HoldSeconds
	if s.dByReason && s.dDeferredSecs > 0 {
		// Decode waiting awaits KV only as far as its deferred requests do.
		awaitingKV = awaitingKV && s.dDeferredSecs-s.copySecs >= th.HoldSeconds
	}
	switch {
	// Decode trailing KV counts with a full batch, or with its own waiting
	// growing while nothing piles up in front of KV (with pull connectors,
	// decode waiting also holds requests whose KV has not arrived).
	case decodeFull && (backlog || decShort) || decShort && s.dWait.grow && !kvPiles && !awaitingKV:
		v.Class = DecodeBound
		if decodeFull {
			add(fmt.Sprintf("decode batch pinned at %.0f running on %d of %d decode instances for %d s", s.dRunning, s.dPinned, s.dReporting, PinSeconds))
		}
		if decShort {
			add(s.decodeKV.text("decode", "KV"))
		}
		for _, q := range []queue{s.dWait, s.prea} {
			if q.grow {
				add(q.text())
			}
		}
		if kvShort {
			// Pull-gated KV: the KV of a request moves only once decode has
			// room for it, so KV trailing prefill is decode's doing.
			add(fmt.Sprintf("KV %.1f req/s trails prefill %.1f req/s because decode admits no more: KV moves only when decode has room", s.kvPrefill.own, s.kvPrefill.up))
		}
		if s.pKVFull {
			add(fmt.Sprintf("prefill KV cache %.0f%% full of requests decode has not taken", 100*s.pKVUsage))
		}
	case kvAdmission:
		v.Class = AdmissionBound
		add(fmt.Sprintf("decode KV cache %.0f%% full, %.0f requests holding blocks while their KV arrives (deferred) ≈ %.1f s each, about one copy (%.2f s): the link keeps up",
			100*s.dKVUsage, s.dDeferred, s.dDeferredSecs, s.copySecs))
		if s.dCap.grow {
			add(s.dCap.text() + ": requests wait for decode KV blocks")
		} else {
			add(fmt.Sprintf("decode waiting for capacity holds %.0f requests: they wait for decode KV blocks", s.dCapLevel))
		}
		if s.dReporting > 0 {
			add("decode has room: no decode batch is pinned at a limit")
		}
		add("decode's KV cache caps the transfers in flight: more decode KV (or shorter holds), not link bandwidth or decode compute, raises throughput")
	case kvShort || s.infl.grow || s.pKVGrow || blocked || awaitingKV:
		v.Class = KVBound
		if kvShort {
			add(s.kvPrefill.text("KV", "prefill"))
		}
		if s.infl.grow {
			add(s.infl.text())
		}
		if s.xfer.grow {
			add(s.xfer.text())
		}
		if s.pKVGrow {
			add(fmt.Sprintf("prefill KV cache filling with requests awaiting transfer: %.0f%% → %.0f%%", 100*max(s.pKVTr.From, 0), 100*s.pKVTr.To))
		}
		if blocked {
			if s.inflHeld {
				add(fmt.Sprintf("prefill inflight queue holds %.0f requests ≈ %.1f s of KV throughput", s.inflLevel, s.inflSeconds))
			}
			if s.pKVFull {
				add(fmt.Sprintf("prefill KV cache %.0f%% full of requests awaiting transfer", 100*s.pKVUsage))
			}
			for _, q := range []queue{s.pWait, s.boot} {
				if q.grow {
					add(q.text() + " behind it")
				}
			}
		}
		if awaitingKV {
			add(fmt.Sprintf("decode waiting holds %.0f requests ≈ %.1f s of decode throughput, awaiting their KV", s.dWaitLevel, s.dWaitSeconds))
		}
		if decodeFull {
			add(fmt.Sprintf("decode has room: its batch is pinned on only %d of %d instances", s.dPinned, s.dReporting))
		} else if s.dReporting > 0 {
			add("decode has room: no decode batch is pinned at a limit")
		}
	case s.pWait.grow || s.pWaitHeld:
		v.Class = PrefillBound
		if s.pWait.grow {
			add(s.pWait.text())
		} else {
			add(fmt.Sprintf("prefill waiting holds %.0f requests ≈ %.1f s of prefill throughput", s.pWaitLevel, s.pWaitSeconds))
		}
		add(fmt.Sprintf("prefill %.1f req/s; downstream keeps up", s.prefillRPS))
	case s.boot.grow || s.prea.grow:
		v.Class = AdmissionBound
		for _, q := range []queue{s.prea, s.boot} {
			if q.grow {
				add(q.text())
			}
		}
		add("prefill waiting stays short and no decode batch is pinned: decode KV slots, not compute, hold requests back")
	default:
		v.Class = Balanced
		if s.kvPrefill.known && s.decodeKV.known {
			add(fmt.Sprintf("prefill %.1f, KV %.1f, decode %.1f req/s: none trails its feeder by %.0f%% or more",
				s.kvPrefill.up, s.kvPrefill.own, s.decodeKV.own, 100*th.RateGap))
		} else {
			add(fmt.Sprintf("prefill %.1f req/s", s.prefillRPS))
		}
		add("no hand-off or waiting queue growing")
	}
}
