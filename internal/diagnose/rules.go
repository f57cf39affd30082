package diagnose

import "fmt"

// decide applies the rules of docs/web.md#the-verdict, downstream first: congestion propagates
// upstream (a slow decode fills the transfer queues, which stall prefill),
// so the most downstream stage with its own evidence is the source.
func decide(v *Verdict, s signals, th Thresholds) {
	add := func(e string) { v.Evidence = append(v.Evidence, e) }
	kvShort := s.kvPrefill.known && s.kvPrefill.shortfall
	decShort := s.decodeKV.known && s.decodeKV.shortfall
	// A prefill that cannot hand its KV off: waiting grows because its
	// finished requests hold the slots, not because it computes too slowly.
	blocked := s.inflHeld || s.pKVFull
	upstreamGrows := s.pWait.grow || s.boot.grow || s.prea.grow

	switch {
	case decShort && (!kvShort || s.decodeKV.rel() >= s.kvPrefill.rel()):
		v.Stage = Decode
		add(s.decodeKV.text("decode", "KV"))
		if s.dWait.grow {
			add(s.dWait.text())
		}
	case s.dWait.grow && !s.infl.grow && (!kvShort || s.prea.grow):
		// A growing prealloc queue means decode is what holds the transfers
		// back, so a KV shortfall beside it is decode's doing.
		v.Stage = Decode
		add(s.dWait.text())
		if s.prea.grow {
			add(s.prea.text())
		}
		if s.decodeKV.known {
			add(fmt.Sprintf("decode %.1f req/s vs KV %.1f req/s", s.decodeKV.own, s.decodeKV.up))
		}
	case kvShort || s.infl.grow || blocked && upstreamGrows:
		v.Stage = KV
		if kvShort {
			add(s.kvPrefill.text("KV", "prefill"))
		}
		if s.infl.grow {
			add(s.infl.text())
		}
		if s.xfer.grow {
			add(s.xfer.text())
		}
		if blocked && upstreamGrows {
			if s.inflHeld {
				add(fmt.Sprintf("prefill inflight queue holds %.0f requests ≈ %.1f s of KV throughput", s.infl.tr.Level, s.inflSeconds))
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
	case s.pWait.grow:
		v.Stage = Prefill
		add(s.pWait.text())
		add(fmt.Sprintf("prefill %.1f req/s; downstream keeps up", s.prefillRPS))
	case s.boot.grow || s.prea.grow:
		v.Stage = Admission
		for _, q := range []queue{s.prea, s.boot} {
			if q.grow {
				add(q.text())
			}
		}
	default:
		v.Stage = Balanced
		if s.kvPrefill.known && s.decodeKV.known {
			add(fmt.Sprintf("prefill %.1f, KV %.1f, decode %.1f req/s: none trails its feeder by %.0f%% or more",
				s.kvPrefill.up, s.kvPrefill.own, s.decodeKV.own, 100*th.RateGap))
		} else {
			add(fmt.Sprintf("prefill %.1f req/s", s.prefillRPS))
		}
		add("no hand-off or waiting queue growing")
	}
}
