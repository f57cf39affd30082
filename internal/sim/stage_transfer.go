package sim

import (
	"time"
)

func (g *group) descriptors(sc Scenario) int {
	if g.spec.Transfer.Descriptors > 0 {
		return g.spec.Transfer.Descriptors
	}
	return (sc.InputTokens + 15) / 16 // one per 16-token KV block
}

// kickTransfer hands queued KV to idle transfer threads of prefill engine p.
// Every thread gets an equal share of the link, so the stage's capacity is
// bandwidth/B_request requests/s whatever the thread count.
func (m *Model) kickTransfer(p *engine) {
	if p.inst.down {
		return
	}
	spec := p.inst.grp.spec.Transfer
	for p.freeThr > 0 && len(p.xferQ) > 0 {
		r := p.xferQ[0]
		p.xferQ = p.xferQ[1:]
		if r.aborted {
			m.failOnPrefill(p, r)
			p.inflight--
			continue
		}
		th := 0
		for th < len(p.threadBusy) && p.threadBusy[th] {
			th++
		}
		p.threadBusy[th] = true
		p.threadReq[th] = r
		p.freeThr--
		r.xferStart = m.now
		perThread := spec.BandwidthBytesPerSec / float64(spec.Threads)
		dur := m.spread(secsToNs(float64(p.inst.grp.spec.TransferBytes(m.sc, r.hit)) / perThread))
		m.schedule(&event{t: m.now + dur, kind: evTransferDone, eng: p, gen: p.gen, req: r, thread: th})
	}
}

func (m *Model) transferDone(p *engine, th int, r *request) {
	p.threadBusy[th] = false
	p.threadReq[th] = nil
	p.freeThr++
	p.xferBusyNs += m.now - r.xferStart
	g := p.inst.grp
	if r.aborted { // decode died mid-copy: the sender notices at completion
		m.failOnPrefill(p, r)
		p.inflight--
		m.kickTransfer(p)
		m.kickPrefill(p)
		return
	}
	d := r.d
	bytes := g.spec.TransferBytes(m.sc, r.hit)
	dur := time.Duration(m.now - r.xferStart)
	descs := g.descriptors(m.sc)

	// The side whose connector counts the copy records it: FlagCX, Mooncake
	// and UCX on the pushing prefill, NIXL on the pulling decode (on the
	// writing prefill in its push mode).
	exporter := p
	if g.spec.Connector == ConnectorNIXL && !g.spec.NIXLPush {
		exporter = d
	}
	if !m.loadFails(p, r, th) { // a failed load moves no KV (failures.go)
		exporter.stats.kv.Thread(th%exporter.stats.kv.Threads()).RecordTransfer(dur, bytes, descs)
		exporter.inst.truth.addKV(m.now, bytes)
		if g.prof.OnTransfer != nil {
			g.prof.OnTransfer(exporter.stats, p.stats, Transfer{Bytes: bytes, Duration: dur, Descriptors: descs})
		}
	}
	if !g.prof.SplitLegs {
		// One request spans both engines: the prefill side streams it back
		// (and its tokenizer counts it) only once the KV has been sent.
		es := p.stats
		es.Requests++
		es.PromptTokens += uint64(m.sc.InputTokens)
		es.GenTokens++
		es.E2E.observe(float64(m.now-r.sent) / 1e9)
		p.inst.truth.addPrefill(m.now)
		m.prefillStagesDone(p, r)
	}
	m.releasePrefillSlot(p, r)

	d.receiving = remove(d.receiving, r)
	r.dReady = m.now
	d.ready = append(d.ready, r)
	m.kickDecode(d)
	m.kickTransfer(p)
	m.kickPrefill(p)
}
