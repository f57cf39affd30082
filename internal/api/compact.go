package api

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// CompactFormat names the short-key point encoding of the stream and of
// /api/v1/series?format=compact. A point of 16 instances fits in well under
// 4 KiB, where the verbose JSON needs about 16 KiB.
const CompactFormat = "compact-1"

// CompactFields names the positions of the compact arrays: "p" and "d" are
// stages, "k" the KV stage, "i" one instance (in the order of "nm").
var CompactFields = map[string][]string{
	"p": stageFields, "d": decodeFields, "k": kvFields, "i": instanceFields,
	"u":  {"prefill_instances", "prefill_up", "kv_instances", "kv_up", "decode_instances", "decode_up"},
	"nm": {"target", "role", "engine"},
}

var (
	stageFields = []string{"requests_per_second", "requests_per_second_window", "running", "waiting",
		"queue_bootstrap", "queue_inflight", "queue_prealloc", "queue_transfer", "kv_cache_usage_ratio",
		"prompt_tokens_per_second", "generation_tokens_per_second",
		"ttft_p50", "ttft_p90", "ttft_p99", "itl_p50", "itl_p90", "itl_p99", "e2e_p50", "e2e_p90", "e2e_p99",
		"busy_instances"}
	// decodeFields are a stage's and its batch's.
	decodeFields = append(slices.Clone(stageFields), "batch_running_mean", "batch_limit")
	kvFields     = []string{"requests_per_second", "requests_per_second_window", "bytes_per_second",
		"bytes_per_second_window", "transfers_per_second", "failures_per_second",
		"transfer_p50", "transfer_p90", "transfer_p99", "link_busy_transfers"}
	instanceFields = []string{"up", "requests_per_second", "requests_per_second_window",
		"kv_bytes_per_second", "kv_bytes_per_second_window", "running", "waiting",
		"queue_bootstrap", "queue_inflight", "queue_prealloc", "queue_transfer", "kv_cache_usage_ratio",
		"prompt_tokens_per_second", "generation_tokens_per_second"}
)

func stageNums(s *ledger.StagePoint) []ledger.Num {
	q := s.Queues
	return []ledger.Num{s.Instant, s.Window, s.Running, s.Waiting, q.Bootstrap, q.Inflight, q.Prealloc, q.Transfer,
		s.KVUsage, s.PromptTPS, s.GenTPS, s.TTFT.P50, s.TTFT.P90, s.TTFT.P99, s.ITL.P50, s.ITL.P90, s.ITL.P99,
		s.E2E.P50, s.E2E.P90, s.E2E.P99, s.Busy}
}

// decodeNums are the decode stage's values: a stage's and its batch's.
func decodeNums(s *ledger.StagePoint) []ledger.Num {
	b := s.Batch
	if b == nil {
		none := ledger.Absent("no decode batch in the point")
		b = &ledger.Batch{Running: none, Limit: none}
	}
	return append(stageNums(s), b.Running, b.Limit)
}

func kvNums(k *ledger.KVPoint) []ledger.Num {
	return []ledger.Num{k.Instant, k.Window, k.BytesInstant, k.BytesWindow, k.Transfers, k.Failures,
		k.XferTime.P50, k.XferTime.P90, k.XferTime.P99, k.LinkBusy}
}

func instanceNums(p *ledger.InstancePoint) []ledger.Num {
	up := ledger.Val(0)
	if p.Up {
		up = ledger.Val(1)
	}
	q := p.Queues
	return []ledger.Num{up, p.Instant, p.Window, p.KVBytes, p.KVBytesW, p.Running, p.Waiting,
		q.Bootstrap, q.Inflight, q.Prealloc, q.Transfer, p.KVUsage, p.PromptTPS, p.GenTPS}
}

// compactEncoder remembers the instance list it last sent, so that names go
// out only when they change: the first event of a stream always has them.
type compactEncoder struct {
	names [][3]string
	sent  bool
}

// encode appends one point. v, when not nil, is the verdict at this point.
func (e *compactEncoder) encode(b []byte, p *ledger.Point, v *diagnose.Verdict) []byte {
	reasons := map[string][]string{}
	var order []string // reasons in first-seen order, for stable output
	absent := func(code, why string) {
		if _, ok := reasons[why]; !ok {
			order = append(order, why)
		}
		reasons[why] = append(reasons[why], code)
	}
	b = append(b, `{"t":`...)
	b = strconv.AppendInt(b, p.Time.UnixMilli(), 10)

	names := make([][3]string, len(p.Instances))
	for i, in := range p.Instances {
		names[i] = [3]string{in.Target, in.Role, in.Engine}
	}
	if !e.sent || !slices.Equal(names, e.names) {
		e.names, e.sent = names, true
		nm, _ := json.Marshal(names)
		b = append(b, `,"nm":`...)
		b = append(b, nm...)
	}
	b = appendNums(append(b, `,"p":`...), "p", stageNums(&p.Prefill), absent)
	b = appendNums(append(b, `,"k":`...), "k", kvNums(&p.KV), absent)
	b = appendNums(append(b, `,"d":`...), "d", decodeNums(&p.Decode), absent)
	b = append(b, `,"g":`...)
	b = appendNum(b, p.GlobalKVBytes)
	if !p.GlobalKVBytes.OK() {
		absent("g", p.GlobalKVBytes.Why)
	}
	b = append(b, `,"u":[`...)
	for i, n := range []int{p.Prefill.Instances, p.Prefill.Up, p.KV.Instances, p.KV.Up, p.Decode.Instances, p.Decode.Up} {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	b = append(b, `],"i":[`...)
	for i := range p.Instances {
		if i > 0 {
			b = append(b, ',')
		}
		row := "i" + strconv.Itoa(i)
		nums := instanceNums(&p.Instances[i])
		// A down instance has every value absent for one reason: one code
		// for the row instead of thirteen.
		if why, all := sameReason(nums[1:]); all {
			absent(row, why)
			b = appendNums(b, "", nums, func(string, string) {})
			continue
		}
		b = appendNums(b, row+".", nums, absent)
	}
	b = append(b, ']')
	if len(order) > 0 {
		b = append(b, `,"a":{`...)
		for i, why := range order {
			if i > 0 {
				b = append(b, ',')
			}
			k, _ := json.Marshal(why)
			c, _ := json.Marshal(strings.Join(reasons[why], " "))
			b = append(append(append(b, k...), ':'), c...)
		}
		b = append(b, '}')
	}
	if v != nil {
		vb, _ := json.Marshal(v)
		b = append(append(b, `,"v":`...), vb...)
	}
	return append(b, '}')
}

func sameReason(nums []ledger.Num) (string, bool) {
	if len(nums) == 0 || nums[0].OK() {
		return "", false
	}
	for _, n := range nums[1:] {
		if n.OK() || n.Why != nums[0].Why {
			return "", false
		}
	}
	return nums[0].Why, true
}

// appendNums writes a JSON array; each absent value is null and its code
// (prefix + index) is reported with the reason.
func appendNums(b []byte, prefix string, nums []ledger.Num, absent func(code, why string)) []byte {
	b = append(b, '[')
	for i, n := range nums {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendNum(b, n)
		if !n.OK() {
			absent(prefix+strconv.Itoa(i), n.Why)
		}
	}
	return append(b, ']')
}

// appendNum writes six significant digits: more than any chart or table
// shows, and half the bytes of full precision.
func appendNum(b []byte, n ledger.Num) []byte {
	if !n.OK() || math.IsNaN(n.V) || math.IsInf(n.V, 0) {
		return append(b, "null"...)
	}
	if n.V == math.Trunc(n.V) && math.Abs(n.V) < 1e15 {
		return strconv.AppendInt(b, int64(n.V), 10)
	}
	return strconv.AppendFloat(b, n.V, 'g', 6, 64)
}
