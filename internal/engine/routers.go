package engine

// Routers: the request routers in front of a pool's prefill and decode
// instances. Each is an adapter with the Frontend trait, registered from
// its own file (dynamo_frontend.go, llmd_epp.go, sglang_gateway.go,
// vllm_router.go); its targets play the role Router. What the ledger reads
// from them (docs/engines.md#routers):
//
//   - RouterRequests: every request the router received, the pool's arrival
//     rate. A router that counts each request once by its outcome instead
//     (Dynamo's status="success"/"error") gives FrontendRequests and
//     Errored, whose sum is the same.
//   - Errored: requests the router answered with an error, rejections
//     included.
//   - FrontendQueued, FrontendInflight: requests waiting at the router and
//     in flight through it.
//   - TTFT: time to first token as the router's clients see it.
//   - RouterRemotePrefill, RouterDecodeOnly: the router's P/D decision per
//     request, where it exports one.

// IsRouter reports whether e's adapter is a request router.
func IsRouter(e Engine) bool {
	a, ok := Lookup(e)
	return ok && a.Frontend
}
