package scheduler

import (
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// Each target reads through the Source the engine registry gives it, and a
// body it cannot read is recorded with the reason its error names.
func TestReadFailureReasons(t *testing.T) {
	c := &Scheduler{}
	vllm := "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\",model_name=\"m\"} 1\n"
	f := func(tg engine.Target, body, contentType, want string) {
		t.Helper()
		src, err := c.newBodyReader(tg)
		if err != nil {
			t.Fatalf("%+v: %v", tg, err)
		}
		_, _, err = src.Read([]byte(body), contentType, time.Now())
		if want == "" {
			if err != nil {
				t.Errorf("%+v %.30q: %v", tg, body, err)
			}
			return
		}
		if err == nil {
			t.Fatalf("%+v %.30q: read succeeded, want reason %s", tg, body, want)
		}
		if got := ReadFailureReason(err); string(got) != want {
			t.Errorf("%+v %.30q: reason %q (%v), want %q", tg, body, got, err, want)
		}
	}
	decode := engine.Target{Name: "d", Role: engine.Decode}
	f(decode, vllm, "", "")
	f(engine.Target{Name: "x"}, vllm, "", "role")
	f(decode, "process_cpu_seconds_total 1\n", "", "adapter")
	f(decode, "vllm:num_requests_running{engine=\"0\" 1\n", "", "parse")
	f(decode, "[]", "application/json", "not_exposition")
	f(decode, "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 1\nvllm:num_requests_running{engine=\"0\",model_name=\"m\"} 2\n", "", "duplicate_series")
	iter := engine.Target{Name: "g", Role: engine.Decode, Engine: engine.TensorRTLLM, IterationStats: true}
	f(iter, "[]", "application/json", "iterstats_empty")
	f(iter, `[{"iter": 1, "numActiveRequests": 2}]`, "application/json", "")
	f(iter, `{"iter": 1}`, "application/json", "parse")
}
