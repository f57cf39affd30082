package tui

// kvAbsent is why the deployment's KV req/s is absent, "" when it is not:
// the ledger's own reason where the point has one (no target exports KV
// bytes, a pool without B_request), so that the advice to set
// -kv-bytes-per-request is given only when B_request is what is missing.
func kvAbsent(snap *Snapshot) string {
	if p := snap.Point; p != nil {
		if kv := p.KV.Window; !kv.OK() {
			return kv.Why
		}
		if len(snap.Pools) > 0 {
			return "" // the pools' own B_request make it
		}
	}
	if snap.KVRequest.Bytes <= 0 {
		return "set -kv-bytes-per-request or -model-config"
	}
	return ""
}
