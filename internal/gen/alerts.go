package gen

import (
	"fmt"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// Alert thresholds. A stage lags when, averaged over lagRange, it processes
// less than lagRatio of what the stage before it hands over.
const (
	lagRange        = "1m"
	lagRatio        = "0.9"
	queueGrowth     = "0.1" // requests/s, the queue's slope over queueRange
	queueRange      = "1m"
	queueMinDepth   = "10"
	docsRunbookBase = "docs/prometheus.md#alerts"
	// A decode instance's batch is pinned at its limit when over pinRange
	// it sits at its peak in at least 1 − pinDips of the samples (and holds
	// at least 2 requests), as the rule the verdict and the advisor share
	// (internal/saturation) has it: a sample below the peak between a
	// finish and the next admission is a dip, not room.
	pinRange = "15s"
	pinDips  = "0.2"
	// Prefill KV cache full: its lower quartile over lagRange at or above
	// kvFull, the verdict's KVFull.
	kvFull = "0.9"
)

func alert(name, expr, forDur, severity, summary, runbook string) Rule {
	return Rule{
		Alert:  name,
		Expr:   expr,
		For:    forDur,
		Labels: map[string]string{"severity": severity},
		Annotations: map[string]string{
			"summary": summary,
			"runbook": runbook + " (" + docsRunbookBase + ")",
		},
	}
}

// alertRules read only recorded series and up/ptd_target_up, so they work
// the same whichever path fed the recordings.
func alertRules(n Names, kvOn string) []Rule {
	rate := n.Stage[1]
	stage := func(s string) string {
		return fmt.Sprintf(`avg_over_time(%s{stage="%s"}[%s])`, rate, s, lagRange)
	}
	lags := func(slow, fast string) string {
		return fmt.Sprintf("%s < on (path, pool, model) %s * %s", stage(slow), lagRatio, stage(fast))
	}
	// decodeFull: at least half of a model's decode instances have their
	// batch pinned at its limit. With pull connectors (NIXL, TensorRT-LLM,
	// and the model's FlagCX hand-off too) KV moves only when decode has
	// room, so KV trailing prefill beside a full decode is decode's doing.
	decodeRun := fmt.Sprintf(`%s{role="decode"}`, n.TargetRunning)
	pinned := fmt.Sprintf(`(quantile_over_time(%[3]s, %[1]s[%[2]s]) >= max_over_time(%[1]s[%[2]s]) and max_over_time(%[1]s[%[2]s]) >= 2)`,
		decodeRun, pinRange, pinDips)
	decodeFull := fmt.Sprintf("(count by (path, pool, model) %s * 2 >= on (path, pool, model) count by (path, pool, model) (%s))", pinned, decodeRun)
	// prefillKVFull: prefilled requests keep the prefill KV cache full,
	// waiting for their KV to leave.
	// The hand-off queues and waiting, not waiting's parts by reason
	// (vLLM's waiting_capacity and waiting_deferred), which it holds.
	queues := n.TargetQueue + `{queue!~"waiting_.+"}`
	prefillKVFull := fmt.Sprintf(`(avg by (path, pool, model) (quantile_over_time(0.25, %s{role="prefill"}[%s])) >= %s)`, n.TargetKVUsage, lagRange, kvFull)
	return []Rule{
		alert("PTDTargetDown",
			`ptd_target_up == 0 or up{ptd_role!=""} == 0 or up{job="ptdmon"} == 0`,
			"15s", "critical",
			"{{ or $labels.target $labels.ptd_target $labels.instance }} ({{ $labels.job }}) is not being scraped",
			"Check that the engine (or ptdmon) process is running and its /metrics answers from the Prometheus host; stage rates that include it are partial meanwhile."),
		alert("PTDKVRequestBytesUnset",
			fmt.Sprintf("count by (%[3]s) (%[1]s) unless on (%[3]s) (%[2]s > 0)", n.TargetKVBytes[1], n.KVRequestBytes, kvOn),
			"1m", "warning",
			"KV bytes are collected on the {{ $labels.path }} path but B_request is unset{{ with $labels.pool }} for pool {{ . }}{{ end }}, so KV req/s is absent",
			"Set kv_bytes_per_request (or model.config with seq_len) in ptdmon.yaml, or the pool's under pools: (docs/pools.md), then restart ptdmon or regenerate the rules with `ptdmon gen rules -config ptdmon.yaml`."),
		alert("PTDKVTransferLagging",
			"("+lags("kv", "prefill")+" or "+prefillKVFull+") unless on (path, pool, model) "+decodeFull,
			"1m", "warning",
			"KV transfer (pool {{ $labels.pool }}, {{ $labels.path }} path) moves fewer requests/s than prefill completes",
			"KV-bound (KV trails prefill, or prefilled requests keep the prefill KV cache full, while decode has room): look at the prefill inflight and decode transfer queues and the connector's link; if they are flat, check that B_request matches the model, sequence length and KV dtype of this run."),
		alert("PTDDecodeLagging",
			// With decode pinned, anything trailing the stage before it is
			// decode's doing: decode trailing KV or prefill, KV trailing
			// prefill (pull connectors), or a full prefill KV cache.
			"("+lags("decode", "kv")+" or "+lags("decode", "prefill")+
				" or "+lags("kv", "prefill")+" or "+prefillKVFull+") and on (path, pool, model) "+decodeFull,
			"2m", "warning",
			"Decode (pool {{ $labels.pool }}, {{ $labels.path }} path) is at its batch limit and holds the pipeline back",
			"Decode-bound (its batch pinned at the limit while it trails the stage feeding it; KV trailing prefill is then decode's doing, as KV moves only when decode has room): check decode waiting and prealloc queues and KV usage on decode instances; add decode capacity or lower the load."),
		alert("PTDQueueGrowing",
			fmt.Sprintf("(sum by (path, pool, role, queue) (deriv(%s[%s])) > %s and on (path, pool, role, queue) sum by (path, pool, role, queue) (%s) > %s)",
				queues, queueRange, queueGrowth, queues, queueMinDepth)+
				// Prefill waiting grows behind a prefill KV cache full of
				// requests awaiting transfer: KV's doing, not prefill's.
				fmt.Sprintf(` unless on (path, pool, role, queue) label_replace(label_replace(max by (path, pool) %s, "role", "prefill", "", ""), "queue", "waiting", "", "")`, prefillKVFull),
			"1m", "warning",
			"The {{ $labels.role }} {{ $labels.queue }} queue (pool {{ $labels.pool }}, {{ $labels.path }} path) keeps growing",
			"The stage after this queue is the bottleneck: waiting on prefill means prefill-bound (not raised while the prefill KV cache is full of requests awaiting transfer: that is KV-bound), inflight/transfer means KV-bound, bootstrap/prealloc means decode admission, waiting on decode means decode-bound."),
		alert("PTDKVTransferFailures",
			fmt.Sprintf("sum by (path, target) (%s) > 0", n.TargetKVFailures),
			"", "warning",
			"KV transfers fail on {{ $labels.target }} ({{ $labels.path }} path)",
			"Read the log lines of the engine's KV transfer ("+engine.KVSourceDisplays()+") on both sides of the transfer; failed requests are retried or aborted, so completions drop."),
	}
}
