package sim

// takeDown kills an instance's process: everything it held is lost, its
// peers find out (and count failures) the way real engines do, and it takes
// no traffic until bringUp. Truth is cumulative and unaffected.
func (m *Model) takeDown(in *instance) {
	if in.down {
		return
	}
	in.down = true
	for _, e := range in.engines {
		if e.role == RolePrefill {
			m.killPrefill(e)
		} else {
			m.killDecode(e)
		}
		e.gen++
		e.bootstrap, e.waiting, e.batch, e.xferQ = nil, nil, nil, nil
		e.prealloc, e.receiving, e.ready, e.running = nil, nil, nil, nil
		e.work.stop(m.now) // the GPU worked until the process died
		e.busy, e.stepping = false, false
		e.slotsUsed, e.inflight, e.dSlots = 0, 0, 0
		for i := range e.threadBusy {
			e.threadBusy[i], e.threadReq[i] = false, nil
		}
		e.freeThr = len(e.threadBusy)
	}
	m.migrate()
}

func (m *Model) bringUp(in *instance) {
	in.down = false
	in.restarts++
	in.upAt = append(in.upAt, m.now)
	for _, e := range in.engines {
		e.stats = m.newStats(in, e.idx)
	}
}

func contains(q []*request, r *request) bool {
	for _, x := range q {
		if x == r {
			return true
		}
	}
	return false
}

// killPrefill aborts every request whose KV lives (or will live) on p and
// releases what decode engines reserved for them.
func (m *Model) killPrefill(p *engine) {
	for _, d := range p.inst.grp.decode {
		if d.inst.down {
			continue
		}
		changed := false
		for _, q := range []*[]*request{&d.prealloc, &d.receiving} {
			kept := (*q)[:0]
			for _, r := range *q {
				if r.p != p {
					kept = append(kept, r)
					continue
				}
				r.aborted = true
				m.lost(r)
				changed = true
				if r.dSlot {
					r.dSlot = false
					d.dSlots--
				}
				m.countRecvFailure(d)
			}
			*q = kept
		}
		if changed {
			m.kickAlloc(d)
		}
	}
	for _, q := range [][]*request{p.bootstrap, p.waiting, p.batch, p.xferQ, p.threadReq} {
		for _, r := range q {
			if r != nil {
				r.aborted = true
				m.lost(r)
			}
		}
	}
}

func (m *Model) countRecvFailure(d *engine) {
	if d.inst.grp.prof.EngineCountsKVFailures {
		d.stats.TransferFailed++
	} else {
		d.stats.kv.Thread(0).RecordFailedRecv()
	}
}

// killDecode aborts every request bound for d. Prefill engines drop the ones
// still queued at once; a batch being computed or a copy on the wire is
// dropped when it completes (prefillDone/transferDone check aborted).
func (m *Model) killDecode(d *engine) {
	lists := [][]*request{d.prealloc, d.receiving, d.ready, d.running}
	touched := map[*engine]bool{}
	for li, q := range lists {
		for _, r := range q {
			r.aborted = true
			m.lost(r)
			p := r.p
			if p == nil || p.inst.down || r.pGen != p.gen {
				continue
			}
			touched[p] = true
			prof := p.inst.grp.prof
			switch {
			case contains(p.bootstrap, r):
				p.bootstrap = remove(p.bootstrap, r)
				if prof.EngineCountsKVFailures {
					p.stats.BootstrapFailed++
				}
			case contains(p.waiting, r):
				p.waiting = remove(p.waiting, r)
				if prof.EngineCountsKVFailures {
					p.stats.BootstrapFailed++
				}
			case contains(p.xferQ, r):
				p.xferQ = remove(p.xferQ, r)
				m.failOnPrefill(p, r)
				p.inflight--
			case li == 0 && !prof.PreallocFirst && r.pSlot:
				// Prefilled KV parked on P waiting for this decode to
				// allocate; it will never be pulled, so it expires.
				p.stats.kv.Thread(0).RecordExpiredReq()
				m.releasePrefillSlot(p, r)
			}
		}
	}
	for _, p := range m.sortedEngines(touched) {
		m.kickPrefill(p)
		m.kickTransfer(p)
	}
}

// sortedEngines keeps kick order deterministic (map order is random).
func (m *Model) sortedEngines(set map[*engine]bool) []*engine {
	var out []*engine
	for _, in := range m.instances {
		for _, e := range in.engines {
			if set[e] {
				out = append(out, e)
			}
		}
	}
	return out
}
