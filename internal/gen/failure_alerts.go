package gen

import (
	"fmt"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// Failure classes: each model's KV failures by class as a share of the KV
// transfers attempted, and the prompt tokens decode computed itself as a
// share of decode's prompt tokens, over failureWindow; an alert per class
// (docs/prometheus.md#alerts, docs/design.md#kv-failure-classes). They read
// ptdmon's /metrics, where the classes are the label class of
// ptd_kv_transfer_failures_total; the engines path records the same names
// from the connectors' families (failure_engines.go).
const (
	modelFailures       = "model:ptd_kv_transfer_failures:rate" + failureWindow
	modelAttempts       = "model:ptd_kv_transfer_attempts:rate" + failureWindow
	modelFailureRatio   = "model:ptd_kv_transfer_failures:ratio_rate" + failureWindow
	modelRecomputeRatio = "model:ptd_prompt_tokens_computed_on_decode:ratio_rate" + failureWindow
	// modelTransfers are the engines path's transfers counted, which its
	// attempts add to its failures.
	modelTransfers = "model:ptd_kv_transfers:rate" + failureWindow
)

// failureClassAlerts are the alert of each class and its threshold: the
// share of attempts (of decode's prompt tokens, for recompute) above which
// it fires. An expired lease is the autoscaling signal (decode does not
// pull in time); a lost notification leaves decode waiting; recompute on
// decode at 5% is decode doing a twentieth of prefill's work.
var failureClassAlerts = []struct {
	class     string
	alert     string
	threshold string
	summary   string
	runbook   string
}{
	{string(engine.FailNetwork), "PTDKVFailuresNetwork", "0.01",
		"Over 1% of the KV transfers of {{ $labels.model }} fail in the network",
		"The transport failed (a transfer or receive reported failed, a peer disconnected): check the links and the connector's log on both sides; this is no capacity signal."},
	{string(engine.FailTimeout), "PTDKVFailuresTimeout", "0.01",
		"Over 1% of the KV transfers of {{ $labels.model }} time out",
		"A bootstrap or a transfer timed out: a slow link, or a decode instance that admits late; compare with the decode prealloc and transfer queues."},
	{string(engine.FailExpiry), "PTDKVLeaseExpiry", "0.01",
		"Over 1% of the KV transfers of {{ $labels.model }} find their KV lease expired",
		"Prefill freed the KV before decode pulled it: decode does not keep up (an autoscaling signal), or the lease timeout is shorter than decode's queue."},
	{string(engine.FailNotification), "PTDKVNotificationsLost", "0.01",
		"Over 1% of the KV transfers of {{ $labels.model }} lose their completion notification",
		"The transfer's notification did not arrive: decode waits for KV that may be there; check the connector's side channel."},
	{string(engine.FailUnclassified), "PTDKVFailuresUnclassified", "0.01",
		"Over 1% of the KV transfers of {{ $labels.model }} fail, for no reason the source gives",
		"Read the log lines of the engine's KV transfer on both sides."},
}

// recomputeThreshold is the share of decode's prompt tokens computed on
// decode above which PTDDecodeRecomputesPrefill fires.
const recomputeThreshold = "0.05"

// failureClassRules records the shares and alerts on them, in one group:
// each alert reads the recordings of the same evaluation.
func failureClassRules() []Rule {
	p := []string{"path", pathPtdmon}
	rate := func(s string) string { return rangeFn("rate", s, failureWindow) }
	out := []Rule{
		record(modelFailures, sumBy("sum", "model, class", rate(`ptd_kv_transfer_failures_total{class!=""}`)), p...),
		// The attempts: what the connectors count (completed transfers
		// for vLLM's) and every failure but lost notifications, which
		// vLLM's NIXL counts within its failed transfers too (PR #55854).
		// A model whose sources count only one of the two has that one.
		record(modelAttempts, fmt.Sprintf("(%[1]s + %[2]s) or %[1]s or %[2]s",
			sumBy("sum", "model", rate("ptd_kv_transfers_total")), sumBy("sum", "model", rate(`ptd_kv_transfer_failures_total{class!="notification"}`))), p...),
		record(modelFailureRatio, fmt.Sprintf("%s / on (path, model) group_left %s", modelFailures, modelAttempts)),
		record(modelRecomputeRatio, fmt.Sprintf("%s / %s",
			sumBy("sum", "model", rate(`ptd_prompt_tokens_computed_total{role="decode"}`)),
			sumBy("sum", "model", rate(`ptd_prompt_tokens_total{role="decode"}`))), p...),
	}
	for _, a := range failureClassAlerts {
		out = append(out, alert(a.alert, fmt.Sprintf(`%s{class="%s"} > %s`, modelFailureRatio, a.class, a.threshold),
			"30s", "warning", a.summary, a.runbook))
	}
	return append(out, alert("PTDDecodeRecomputesPrefill", fmt.Sprintf("%s > %s", modelRecomputeRatio, recomputeThreshold),
		"30s", "warning",
		"Decode of {{ $labels.model }} computes over 5% of its prompt tokens itself",
		"KV loads fail and decode recomputes the prompts (or requests skip prefill): decode is doing prefill work, so its prompt throughput is not prefill's; read the failure classes beside it."))
}
