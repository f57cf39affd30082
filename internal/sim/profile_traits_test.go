package sim

import (
	"strings"
	"testing"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// TestProfileTraitsDecide: what a group may ask for follows its engine's
// profile, not its engine's name. A made-up engine whose profile recomputes
// failed loads may set failures, and one that does not simulate decode-only
// requests refuses them, with the same messages as the built-in engines.
func TestProfileTraitsDecide(t *testing.T) {
	const toy ptd.Engine = "toytraits"
	RegisterProfile(Profile{Engine: toy, Format: toyFormat{}, Connectors: []string{"toylink"},
		RecomputesFailedLoads: true, NoDecodeOnly: true})
	t.Cleanup(func() { UnregisterProfile(toy) })

	sc := baseScenario()
	with := func(engine string, set func(*Group)) error {
		s := sc
		s.Groups = []Group{sc.Groups[0]}
		g := &s.Groups[0]
		g.Engine, g.Connector = engine, profileFor(engine).Connectors[0]
		set(g)
		return s.Validate()
	}
	fail := func(g *Group) { g.Failures.Ratio = 0.1 }
	decodeOnly := func(g *Group) { g.DecodeOnlyFraction = 0.2 }

	if err := with(string(toy), fail); err != nil {
		t.Errorf("failures on an engine whose profile recomputes them: %v", err)
	}
	err := with(string(ptd.SGLang), fail)
	if err == nil || !strings.Contains(err.Error(), "only the vllm or toytraits engines recompute failed KV loads, not sglang") {
		t.Errorf("failures on SGLang: %v", err)
	}
	if err := with(string(ptd.VLLM), decodeOnly); err != nil {
		t.Errorf("decode-only requests on vLLM: %v", err)
	}
	err = with(string(toy), decodeOnly)
	if err == nil || !strings.Contains(err.Error(), "is not simulated for toytraits") {
		t.Errorf("decode-only requests on an engine whose profile has none: %v", err)
	}
}

// TestConnectorOverrideByEngine: a connector override replaces the
// connector of its engine's groups only.
func TestConnectorOverrideByEngine(t *testing.T) {
	sc := baseScenario()
	if err := (Overrides{Connectors: map[ptd.Engine]string{ptd.VLLM: ConnectorNIXL}}).Apply(&sc); err != nil {
		t.Fatal(err)
	}
	for _, g := range sc.Groups {
		want := ConnectorMooncake
		if g.Engine == string(ptd.VLLM) {
			want = ConnectorNIXL
		}
		if g.Connector != want {
			t.Errorf("group %s (%s): connector %q, want %q", g.Name, g.Engine, g.Connector, want)
		}
	}
}
