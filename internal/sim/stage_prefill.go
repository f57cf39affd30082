package sim

// kickPrefill starts a batch when the engine is idle and has KV room. KV room
// is what couples prefill to the transfer stage: a prefilled request keeps
// its slot until its KV has left, so a slow link stalls prefill.
func (m *Model) kickPrefill(p *engine) {
	if p.busy || p.inst.down {
		return
	}
	spec := p.inst.grp.spec.Prefill
	for len(p.waiting) > 0 && len(p.batch) < spec.MaxBatch && p.slotsUsed < spec.KVSlots {
		r := p.waiting[0]
		p.waiting = p.waiting[1:]
		if r.aborted {
			continue
		}
		r.pStart = m.now
		r.pSlot = true
		p.slotsUsed++
		p.batch = append(p.batch, r)
	}
	if len(p.batch) == 0 {
		return
	}
	p.busy = true
	p.work.begin(m.now)
	dur := m.spread(secsToNs(float64(len(p.batch)*m.sc.InputTokens) / spec.TokensPerSec))
	m.schedule(&event{t: m.now + dur, kind: evPrefillDone, eng: p, gen: p.gen})
}

func (m *Model) prefillDone(p *engine) {
	batch := p.batch
	p.batch = nil
	p.busy = false
	p.work.stop(m.now)
	if len(batch) > 0 {
		p.busyNs += m.now - batch[0].pStart
		p.stats.IterTokens.observe(float64(len(batch) * m.sc.InputTokens))
	}
	g := p.inst.grp
	for _, r := range batch {
		r.pEnd = m.now
		if r.aborted { // its decode died while we computed
			m.failOnPrefill(p, r)
			continue
		}
		p.inflight++
		if g.prof.SplitLegs {
			m.prefillLegFinished(p, r)
		}
		if g.prof.PreallocFirst { // its decode slot is waiting: push the KV
			p.xferQ = append(p.xferQ, r)
			continue
		}
		d := pick(g.decode, &g.rrD, decodeLoad)
		if d == nil {
			// No decode to hand it to: the KV expires on prefill.
			p.stats.kv.Thread(0).RecordExpiredReq()
			m.releasePrefillSlot(p, r)
			continue
		}
		r.d, r.dGen, r.dSubmit = d, d.gen, m.now
		d.prealloc = append(d.prealloc, r)
		m.kickAlloc(d)
	}
	m.kickTransfer(p)
	m.kickPrefill(p)
}

// prefillLegFinished: the router sent the prefill leg with max_tokens=1,
// so it finishes on P right after its single token (Profile.SplitLegs).
func (m *Model) prefillLegFinished(p *engine, r *request) {
	s := p.stats
	s.Finished[reasonLength]++
	s.PromptTokens += uint64(m.sc.InputTokens)
	s.GenTokens++
	s.PrefixQueries += uint64(m.sc.InputTokens)
	ttft := float64(r.pEnd-r.sent) / 1e9
	s.TTFT.observe(ttft)
	s.E2E.observe(ttft)
	s.QueueTime.observe(float64(r.pStart-r.queued) / 1e9)
	s.PrefillTime.observe(float64(r.pEnd-r.pStart) / 1e9)
	s.InferenceTime.observe(float64(r.pEnd-r.pStart) / 1e9)
	s.DecodeTime.observe(0)
	s.PromptLen.observe(float64(m.sc.InputTokens))
	s.GenLen.observe(1)
	p.inst.truth.addPrefill(m.now)
}

func (m *Model) releasePrefillSlot(p *engine, r *request) {
	if r.pSlot {
		r.pSlot = false
		p.slotsUsed--
		p.inflight--
	}
}

// failOnPrefill drops a prefilled request whose decode side vanished.
func (m *Model) failOnPrefill(p *engine, r *request) {
	if r.pSlot {
		r.pSlot = false
		p.slotsUsed--
	}
	if p.inst.grp.prof.EngineCountsKVFailures {
		p.stats.TransferFailed++
	} else {
		p.stats.kv.Thread(0).RecordFailedTransfer()
	}
}
