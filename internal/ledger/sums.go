package ledger

import "github.com/ptdmon/ptdmon/internal/engine"

// sum adds present values; with some absent it reports which.
type sum struct {
	v       float64
	n       int
	reasons []string
}

func (s *sum) add(x Num) {
	if x.OK() {
		s.v += x.V
		s.n++
		return
	}
	s.reasons = append(s.reasons, x.Why)
}

func (s *sum) num(none string) Num {
	if s.n > 0 {
		return Val(s.v)
	}
	if len(s.reasons) > 0 {
		return Absent(s.reasons[0])
	}
	return Absent(none)
}

// queueSums add up the P/D hand-off queues of a stage's instances.
type queueSums struct {
	bootstrap, inflight, prealloc, transfer sum
}

func (q *queueSums) add(x Queues) {
	q.bootstrap.add(x.Bootstrap)
	q.inflight.add(x.Inflight)
	q.prealloc.add(x.Prealloc)
	q.transfer.add(x.Transfer)
}

func (q *queueSums) num(none string) Queues {
	return Queues{Bootstrap: q.bootstrap.num(none), Inflight: q.inflight.num(none), Prealloc: q.prealloc.num(none), Transfer: q.transfer.num(none)}
}

// stageSum adds up the instances of the prefill or the decode stage.
type stageSum struct {
	instances, up int
	missing       []string
	asleep        []string

	rate, rateW, running, waiting, usage, promptTPS, genTPS sum
	waitCapacity, waitDeferred                              sum
	queues                                                  queueSums
	ttft, itl, e2e                                          merged
	work                                                    workSum
}

func (s *stageSum) add(in *instanceRead, ip *InstancePoint, lat *latency, w *work) {
	// Asleep on purpose: not an instance the stage's rates, gauges and
	// capacity stand for, and not one missing from them either.
	if ip.Sleep != "" {
		s.asleep = append(s.asleep, ip.Target)
		return
	}
	s.instances++
	if in.why == "" {
		s.up++
	}
	// Down, stale, or up without a usable completion counter: the
	// stage's sum leaves the instance out and says so.
	if !ip.Window.OK() {
		s.missing = append(s.missing, ip.Target)
	}
	s.rate.add(ip.Instant)
	s.rateW.add(ip.Window)
	s.running.add(ip.Running)
	s.waiting.add(ip.Waiting)
	s.waitCapacity.add(in.gauge(engine.WaitingCapacity))
	s.waitDeferred.add(ip.WaitingDeferred)
	s.usage.add(ip.KVUsage)
	s.promptTPS.add(ip.PromptTPS)
	s.genTPS.add(ip.GenTPS)
	s.queues.add(ip.Queues)
	s.ttft.addPart(&lat.ttft, lat.has[0])
	s.itl.addPart(&lat.itl, lat.has[1])
	s.e2e.addPart(&lat.e2e, lat.has[2])
	s.work.add(w)
}

// point is the stage's sums; none is the reason of a value no instance has,
// role the stage's instances' role.
func (s *stageSum) point(none, role string) StagePoint {
	sp := StagePoint{Instances: s.instances, Up: s.up, Missing: s.missing, Asleep: s.asleep}
	sp.Partial = s.rateW.n > 0 && len(s.missing) > 0
	sp.Instant, sp.Window = s.rate.num(none), s.rateW.num(none)
	sp.Running, sp.Waiting = s.running.num(none), s.waiting.num(none)
	sp.WaitingBy = WaitingReasons{Capacity: s.waitCapacity.num(none), Deferred: s.waitDeferred.num(none)}
	// Usage is a ratio per instance: the stage's is their mean.
	if s.usage.n > 0 {
		sp.KVUsage = Val(s.usage.v / float64(s.usage.n))
	} else {
		sp.KVUsage = s.usage.num(none)
	}
	sp.PromptTPS, sp.GenTPS = s.promptTPS.num(none), s.genTPS.num(none)
	sp.Queues = s.queues.num(none)
	sp.TTFT = quant(&s.ttft, "TTFT")
	sp.ITL = quant(&s.itl, "ITL")
	sp.E2E = quant(&s.e2e, "E2E")
	s.work.set(&sp, role)
	return sp
}

// kvSum adds up the KV transfer of every instance with a KV byte counter.
type kvSum struct {
	instances, up int
	missing       []string

	bytes, bytesW, transfers, failures sum
	xferTime                           merged
	link                               workSum
}

func (k *kvSum) add(in *instanceRead, ip *InstancePoint, lat *latency, kr *kvRates, w *work) {
	if ip.Sleep != "" {
		return // transfers nothing on purpose; its stage lists it asleep
	}
	k.instances++
	if in.why == "" {
		k.up++
	}
	if !ip.KVBytesW.OK() {
		k.missing = append(k.missing, ip.Target)
	}
	k.bytes.add(ip.KVBytes)
	k.bytesW.add(ip.KVBytesW)
	if in.why == "" {
		k.transfers.add(kr.transfers)
		for i, m := range engine.FailureMetrics() {
			if c, _ := m.FailureClass(); c.InTotal() {
				k.failures.add(kr.failures[i])
			}
		}
		k.xferTime.addPart(&lat.xfer, lat.has[3])
		k.link.addLink(w)
	}
}

// kvRates are one instance's KV transfers and failures per second over the
// window, read once for the deployment's sums and its pool's.
type kvRates struct {
	transfers Num
	failures  [5]Num // engine.FailureMetrics' order
}

func (r *instanceRead) kvRates() kvRates {
	k := kvRates{transfers: r.windowed(engine.KVTransfers)}
	for i, m := range engine.FailureMetrics() {
		k.failures[i] = r.windowed(m)
	}
	return k
}

// point is the KV stage's sums in bytes (requests need B_request: the
// ledger adds them); noKV is the reason of a value no instance has.
func (k *kvSum) point(noKV string) KVPoint {
	kp := KVPoint{Instances: k.instances, Up: k.up, Missing: k.missing}
	kp.Partial = k.bytesW.n > 0 && len(k.missing) > 0
	kp.BytesInstant, kp.BytesWindow = k.bytes.num(noKV), k.bytesW.num(noKV)
	kp.Transfers, kp.Failures = k.transfers.num(noKV), k.failures.num(noKV)
	kp.XferTime = quant(&k.xferTime, "KV transfer time")
	k.link.setLink(&kp)
	return kp
}
