package engine

// FailureClass names why a KV transfer failed, so that failures that mean
// different things are kept apart: a KV lease that expired says decode
// cannot keep up (an autoscaling signal), a network failure does not
// (docs/design.md#kv-failure-classes).
type FailureClass string

// The failure classes, in the order they are listed.
const (
	// FailNetwork: the transport failed (a transfer or receive reported
	// failed, a remote peer disconnected, a back-end error).
	FailNetwork FailureClass = "network"
	// FailTimeout: a bootstrap or a transfer timed out.
	FailTimeout FailureClass = "timeout"
	// FailExpiry: the prefill side freed a request's KV before the decode
	// side pulled it (lease or request expiry).
	FailExpiry FailureClass = "expiry"
	// FailNotification: the transfer's completion notification was lost.
	FailNotification FailureClass = "notification"
	// FailUnclassified: the source counts failures without saying why.
	FailUnclassified FailureClass = "unclassified"
)

// failureClasses maps each failure counter to its class. The unclassified
// counter, the only one before classes, comes first: where an instance has
// none, the KV stage's failures are absent for its reason.
var failureClasses = [...]struct {
	m Metric
	c FailureClass
}{
	{KVFailures, FailUnclassified},
	{KVFailNetwork, FailNetwork},
	{KVFailTimeout, FailTimeout},
	{KVExpired, FailExpiry},
	{KVFailNotify, FailNotification},
}

// FailureClass returns the class of a KV failure counter, and false for a
// metric that counts no KV failures.
func (m Metric) FailureClass() (FailureClass, bool) {
	for _, f := range failureClasses {
		if f.m == m {
			return f.c, true
		}
	}
	return "", false
}

// InTotal says whether class c's failures enter the failed KV transfers'
// total. A lost notification does not: the KV may have arrived, and vLLM's
// NIXL connector counts it within its failed transfers too since PR #55854
// (a grouped transport counter), so adding it would count it twice.
func (c FailureClass) InTotal() bool { return c != FailNotification }

// FailureMetrics lists the KV failure counters, one per class: their sum,
// lost notifications aside (InTotal), is every failed KV transfer an
// instance reports. Recompute on decode is not
// among them: engines count it in tokens (PromptTokensComputed on a decode
// instance), not in transfers.
func FailureMetrics() []Metric {
	out := make([]Metric, len(failureClasses))
	for i, f := range failureClasses {
		out[i] = f.m
	}
	return out
}
