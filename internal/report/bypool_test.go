package report

import (
	"reflect"
	"testing"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// The report says what each pool's advice knows of a stage whose count
// the deployment's advice does not know, as the page and top do, and
// nothing where the deployment's count is known or no pool knows more.
func TestByPoolLines(t *testing.T) {
	unknown := ledger.Absent("not known until decode saturates")
	stageOf := func(n ledger.Num, atMost ledger.Num, now int) advice.StageAdvice {
		return advice.StageAdvice{Instances: n, AtMost: atMost, Current: now}
	}
	deployment := func(prefill, decode ledger.Num) *advice.Advice {
		return &advice.Advice{Prefill: stageOf(prefill, unknown, 3), Decode: stageOf(decode, unknown, 3)}
	}
	pool := func(name string, prefill, decodeAtMost ledger.Num) Pool {
		return Pool{Name: name, Advice: &advice.Advice{Prefill: stageOf(prefill, unknown, 1), Decode: stageOf(unknown, decodeAtMost, 2)}}
	}
	f := func(name string, r Report, want ...string) {
		t.Helper()
		if got := r.byPoolLines(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	qwen := pool("qwen", ledger.Val(3), unknown)
	llama := pool("llama", unknown, ledger.Val(2))
	f("deployment knows both", Report{Advice: deployment(ledger.Val(5), ledger.Val(4)), Pools: []Pool{qwen, llama}})
	f("one pool", Report{Advice: deployment(unknown, unknown), Pools: []Pool{qwen}})
	f("pools know more", Report{Advice: deployment(unknown, unknown), Pools: []Pool{qwen, llama}},
		"prefill by pool: qwen 3 (now 1), llama ? (now 1)", "decode by pool: qwen ? (now 2), llama ≤ 2 (now 2)")
	f("deployment knows prefill", Report{Advice: deployment(ledger.Val(5), unknown), Pools: []Pool{qwen, llama}},
		"decode by pool: qwen ? (now 2), llama ≤ 2 (now 2)")
	f("no deployment advice", Report{AdviceWhy: "arrival rate unknown", Pools: []Pool{qwen, {Name: "llama", AdviceWhy: "no point"}}},
		"prefill by pool: qwen 3 (now 1), llama – (no point)")
	f("no pool knows more", Report{Advice: deployment(unknown, unknown), Pools: []Pool{pool("a", unknown, unknown), pool("b", unknown, unknown)}})
}
