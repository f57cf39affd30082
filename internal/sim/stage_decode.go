package sim

// kickDecode starts the step loop of an idle decode engine that has requests
// whose KV has arrived.
func (m *Model) kickDecode(d *engine) {
	if d.stepping || d.inst.down {
		return
	}
	m.admit(d)
	if len(d.running) == 0 {
		return
	}
	d.stepping = true
	d.work.begin(m.now)
	m.schedule(&event{t: m.now + m.nextStepNs(d), kind: evDecodeStep, eng: d, gen: d.gen})
}

func (m *Model) admit(d *engine) {
	max := d.inst.grp.spec.Decode.MaxBatch
	for len(d.running) < max && len(d.ready) > 0 {
		r := d.ready[0]
		d.ready = d.ready[1:]
		r.dStart = m.now
		d.running = append(d.running, r)
	}
}

// decodeStep is one forward pass: every running request gets one token,
// finished ones leave and free their KV, waiting ones join.
func (m *Model) decodeStep(d *engine) {
	spec := d.inst.grp.spec.Decode
	step := float64(d.stepNs) / 1e9
	s := d.stats
	split := d.inst.grp.prof.SplitLegs
	d.busyNs += d.stepNs
	d.work.stop(m.now)
	s.IterTokens.observe(float64(d.stepTokens))
	d.occNs += float64(d.stepNs) * float64(len(d.running)) / float64(spec.MaxBatch)

	var gaps uint64
	kept := d.running[:0]
	freed := 0
	for _, r := range d.running {
		r.generated++
		s.GenTokens++
		if r.generated == 1 {
			r.firstTok = m.now
			m.firstToken(d, r)
			if split { // the decode leg started when it was handed over
				s.TTFT.observe(float64(m.now-r.dSubmit) / 1e9)
				s.PromptTokens += uint64(m.sc.InputTokens)
				m.decodePrompt(d, r)
			} else {
				s.TTFT.observe(float64(m.now-r.sent) / 1e9)
			}
		} else {
			gaps++
		}
		if r.generated < m.sc.OutputTokens {
			kept = append(kept, r)
			continue
		}
		m.decodeFinished(d, r)
		freed++
	}
	s.ITL.observeN(step, gaps)
	for i := len(kept); i < len(d.running); i++ {
		d.running[i] = nil
	}
	d.running = kept
	if freed > 0 {
		m.kickAlloc(d)
	}
	m.admit(d)
	if len(d.running) > 0 {
		d.work.begin(m.now)
		m.schedule(&event{t: m.now + m.nextStepNs(d), kind: evDecodeStep, eng: d, gen: d.gen})
	} else {
		d.stepping = false
	}
}

func (m *Model) decodeFinished(d *engine, r *request) {
	s := d.stats
	reason := reasonLength
	if r.stop {
		reason = reasonStop
	}
	if !d.inst.grp.prof.SplitLegs {
		s.Requests++
		s.PromptTokens += uint64(m.sc.InputTokens)
		s.E2E.observe(float64(m.now-r.sent) / 1e9)
	} else {
		s.Finished[reason]++
		s.E2E.observe(float64(m.now-r.dSubmit) / 1e9)
		s.QueueTime.observe(float64(r.dStart-r.dSubmit) / 1e9)
		s.PrefillTime.observe(float64(r.firstTok-r.dStart) / 1e9)
		s.DecodeTime.observe(float64(m.now-r.firstTok) / 1e9)
		s.InferenceTime.observe(float64(m.now-r.dStart) / 1e9)
		s.PromptLen.observe(float64(m.sc.InputTokens))
		s.GenLen.observe(float64(m.sc.OutputTokens))
	}
	r.dSlot = false
	d.dSlots--
	d.inst.truth.addDecode(m.now)
	m.routerAnswered(d.inst.grp)
	m.phaseDone(d, r)
	if m.traced != nil && !r.decodeOnly {
		m.traced(journeyOf(r, d, m.now))
	}
	if m.completed != nil {
		m.completed(m.completion(d, r))
	}
}
