package tui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Each pool's TTFT phases are a line of mean seconds: a phase its sources
// export shows, one they do not is "—", never 0; a response without phases
// (an older server) shows every phase absent.
func TestPhaseLines(t *testing.T) {
	var s Snapshot
	if err := json.Unmarshal([]byte(snapJSON), &s); err != nil {
		t.Fatal(err)
	}
	chat := ledger.AbsentPhases("no instance of the pool exports it")
	chat.Queue, chat.Prefill, chat.Transfer, chat.FirstDecode, chat.TTFT = ledger.Val(0.2), ledger.Val(0.5), ledger.Val(0.125), ledger.Val(0.025), ledger.Val(1.1)
	chat.Untimed, chat.TTFTSource = ledger.Val(0.25), "prefill leg + decode leg"
	s.Pools = []api.Pool{{Name: "chat", TTFTPhases: &chat}, {Name: "old"}}
	var b strings.Builder
	Render(&b, &s, nil, 160)
	rows := map[string]string{}
	for l := range strings.Lines(b.String()) {
		if f := strings.Fields(l); len(f) == 8 {
			rows[f[0]] = strings.Join(f[1:], " ")
		}
	}
	if got := rows["chat"]; got != "0.2 0.5 — 0.125 0.025 0.25 1.1" {
		t.Errorf("chat's phases %q, want 0.2 0.5 — 0.125 0.025 0.25 1.1\n%s", got, b.String())
	}
	if got := rows["old"]; got != "— — — — — — —" {
		t.Errorf("old's phases %q, want every phase absent", got)
	}
	// Which TTFT it is, in words.
	if !strings.Contains(b.String(), "TTFT of the whole request, from prefill leg + decode leg (chat); nothing that times it (not in the response) (old)") {
		t.Errorf("the frame does not say which TTFT it shows:\n%s", b.String())
	}
}
