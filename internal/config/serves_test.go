package config

import (
	"strings"
	"testing"
)

// A transfer library's target takes the role of the engine instance it
// serves: named by serves, or the one engine target on its host.
func TestServes(t *testing.T) {
	f := func(yaml string, want map[string]string, wantErr string) {
		t.Helper()
		c, err := Parse([]byte(yaml), "ptdmon.yaml")
		if err != nil {
			t.Fatal(err)
		}
		c.SetDefaults()
		err = c.Validate()
		switch {
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Fatalf("error %v, want %q", err, wantErr)
		case wantErr == "" && err != nil:
			t.Fatal(err)
		}
		for name, role := range want {
			if got := c.Targets[c.targetIndex(name)].Resolve().Role; string(got) != role {
				t.Errorf("%s: role %q, want %q", name, got, role)
			}
		}
	}
	const engines = `targets:
  - {name: prefill-0, url: "http://10.0.0.1:30000/metrics", role: prefill, engine: sglang}
  - {name: decode-0, url: "http://10.0.0.2:30000/metrics", role: decode, engine: sglang}
`
	// By name, whatever the host.
	f(engines+`  - {name: nixl-p0, url: "http://10.0.0.9:9090/metrics", serves: prefill-0}
`, map[string]string{"nixl-p0": "prefill"}, "")
	// By host: a library declared as such, beside one engine on its host.
	f(engines+`  - {name: nixl-d0, url: "http://10.0.0.2:9090/metrics", engine: nixl-telemetry}
  - {name: te-p0, url: "http://10.0.0.1:8080/metrics", engine: mooncake-te}
`, map[string]string{"nixl-d0": "decode", "te-p0": "prefill"}, "")
	// A configured role wins; no engine on the host leaves the role to the
	// exposition (and the reader asks for one).
	f(engines+`  - {name: nixl-x, url: "http://10.0.0.2:9090/metrics", engine: nixl-telemetry, role: prefill}
  - {name: nixl-y, url: "http://10.0.0.7:9090/metrics", engine: nixl-telemetry}
`, map[string]string{"nixl-x": "prefill", "nixl-y": ""}, "")
	// Two engines on one host: ambiguous, no role taken.
	f(`targets:
  - {name: p0, url: "http://h:8000/metrics", role: prefill}
  - {name: d0, url: "http://h:8001/metrics", role: decode}
  - {name: x, url: "http://h:9090/metrics", engine: nixl-telemetry}
`, map[string]string{"x": ""}, "")
	f(engines+`  - {name: nixl-p0, url: "http://10.0.0.9:9090/metrics", serves: prefill-9}
`, nil, `target "nixl-p0": serves "prefill-9": no other target has that name`)
}
