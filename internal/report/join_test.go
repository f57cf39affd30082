package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/benchresult"
	"github.com/ptdmon/ptdmon/internal/journey"
)

// TestJoinWithTraces: AIPerf's records joined by X-Request-ID with the
// engines' traced requests, every other one traced, each seen by the
// engines 5 ms after the client sent it and its first token reaching the
// client 3 ms after the engines emitted it.
func TestJoinWithTraces(t *testing.T) {
	in, run, _ := simBench(t, 60*time.Second)
	const in5ms, out3ms = 0.005, 0.003
	var recs []journey.Record
	ok := 0
	for i, q := range run.Requests {
		if q.Err != "" {
			continue
		}
		ok++
		if i%2 == 1 {
			continue
		}
		id := q.ID
		if i%4 == 0 {
			id = "cmpl-" + id + "-0" // as vLLM names a request it was given an id for
		}
		recs = append(recs, journey.Record{ID: id, Arrival: q.Start.Add(5 * time.Millisecond), TTFT: q.TTFT - in5ms - out3ms, E2E: q.E2E - in5ms - out3ms})
	}
	res, err := benchresult.Read("profile_export.jsonl", run.AIPerfRecords())
	if err != nil {
		t.Fatal(err)
	}
	in.Bench, in.Journeys = &res, recs
	rep, err := Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	j := rep.Client.Join
	if j == nil || j.Requests != ok || j.Joined != len(recs) || j.Traced != len(recs) {
		t.Fatalf("join %+v: want %d requests, %d joined", j, ok, len(recs))
	}
	near := func(what string, got *float64, want, tol float64) {
		t.Helper()
		if got == nil || math.Abs(*got-want) > tol {
			t.Errorf("%s = %v, want %g", what, got, want)
		}
	}
	near("TTFT outside the engines, p50", j.TTFTOutside.P50, in5ms+out3ms, 1e-6)
	near("TTFT outside the engines, p99", j.TTFTOutside.P99, in5ms+out3ms, 1e-6)
	near("arrival delay, p50", j.ArrivalDelay.P50, in5ms, 1e-6)
	if md := string(rep.Markdown()); !strings.Contains(md, "joined with traces") {
		t.Error("the Markdown does not show the join")
	}
	// Traces of other requests: nothing joins, and it says so.
	for i := range recs {
		recs[i].ID = "other"
	}
	rep, err = Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if j := rep.Client.Join; j.Joined != 0 || !strings.Contains(j.Why, "none of the") {
		t.Errorf("unrelated traces: %+v", j)
	}
}

func TestIDParts(t *testing.T) {
	f := func(id, part string, want bool) {
		t.Helper()
		got := false
		for _, p := range idParts(id) {
			got = got || p == part
		}
		if got != want {
			t.Errorf("%q in the parts of %q: %v, want %v (parts %q)", part, id, got, want, idParts(id))
		}
	}
	f("cmpl-7609a2e7-aa53-4ab1-0", "7609a2e7-aa53-4ab1", true)
	f("cmpl-7609a2e7-aa53-4ab1-0", "609a2e7-aa53-4ab1", false) // not at a delimiter
	f("chatcmpl-sim-vllm-12", "sim-vllm-12", true)
	f("chatcmpl-sim-vllm-12", "sim-vllm-1", false)
	f("sim-vllm-12", "sim-vllm-12", false) // the whole id is matched exactly, not as a part
}
