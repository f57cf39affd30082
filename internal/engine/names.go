package engine

import "sort"

// KnownNames lists every metric name the adapters read, as exposed by the
// engines (histograms by family name, without _bucket/_sum/_count), so
// generated queries can be checked against what ptdmon really understands.
func KnownNames() []string {
	var out []string
	for _, m := range []map[string]rule{vllmCounters, vllmGauges, vllmHistograms, sglangCounters, sglangGauges, sglangHistograms} {
		for name := range m {
			out = append(out, name)
		}
	}
	for name := range vllmByteHistograms {
		out = append(out, name)
	}
	out = append(out, "sglang:kv_transfer_total_mb")
	for _, m := range []map[string]rule{trtllmCounters, trtllmGauges, trtllmHistograms} {
		for name := range m {
			out = append(out, name, "trtllm_"+name)
		}
	}
	for name := range trtllmDisagg {
		out = append(out, name)
	}
	out = append(out, "kv_transfer_bytes", "trtllm_kv_transfer_bytes")
	sort.Strings(out)
	return out
}
