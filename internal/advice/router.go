package advice

import (
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Where the arrival rate the advice sizes for comes from (Demand.Basis).
const (
	// BasisRouter: the router's own request counter (docs/pools.md#routers).
	BasisRouter = "router-measured: the router's request counter"
	// BasisInferred: no router; prefill completions plus the growth of
	// the requests held on prefill.
	BasisInferred = "inferred from prefill completions and the growth of its queues"
)

// routerArrival sets d's observed arrival rate to the router's mean over
// the points after from, where the routers counted arrivals in any of
// them, and the remote-prefill share where they count their P/D decisions.
func routerArrival(d *Demand, points []ledger.Point, from time.Time) {
	var arrival, remote, only stat
	for _, p := range points {
		if !p.Time.After(from) {
			continue
		}
		if p.Router.Arrival.OK() {
			arrival.add(p.Router.Arrival.V)
		}
		if p.Router.RemotePrefill.OK() && p.Router.DecodeOnly.OK() {
			remote.add(p.Router.RemotePrefill.V)
			only.add(p.Router.DecodeOnly.V)
		}
	}
	if arrival.n == 0 {
		if n := len(points); n > 0 && points[n-1].Router.Instances > 0 {
			// A router whose arrivals are not known yet: say why the
			// estimate is the inferred one.
			d.Basis = BasisInferred + " (router arrivals absent: " + points[n-1].Router.Arrival.Why + ")"
		}
		return
	}
	d.Observed, d.Basis = ledger.Val(arrival.mean), BasisRouter
	if remote.n > 0 && remote.mean+only.mean > 0 {
		d.RemotePrefillShare = ledger.Val(remote.mean / (remote.mean + only.mean))
	} else if n := len(points); n > 0 {
		d.RemotePrefillShare = ledger.Absent(points[n-1].Router.DecodeOnly.Why)
	}
}

// remote is d for the stages only remote prefills pass: prefill and the KV
// transfer see the remote-prefill share of the target, where the router
// counts it.
func (d Demand) remote() Demand {
	if d.Basis == BasisRouter && d.Target.OK() && d.RemotePrefillShare.OK() {
		d.Target = ledger.Val(d.Target.V * d.RemotePrefillShare.V)
	}
	return d
}
