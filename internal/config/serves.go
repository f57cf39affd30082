package config

import (
	"fmt"
	"net/url"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// A transfer library's endpoint (NIXL's telemetry, the Mooncake transfer
// engine) is a target of its own that counts the KV transfers of one
// engine instance, so it plays that instance's role. tieServed gives a
// library target without a role the role of the instance it serves:
// the target its serves names, or else, for a target declared as a
// library (engine: nixl-telemetry or mooncake-te), the one engine target
// on the same host (another port). docs/engines.md#transfer-libraries.
func (c *Config) tieServed() {
	for i := range c.Targets {
		t := &c.Targets[i]
		if t.Role != "" {
			continue
		}
		if t.Serves != "" {
			if j := c.targetIndex(t.Serves); j >= 0 && j != i {
				t.Role = c.Targets[j].Role
			}
			continue
		}
		if eng, _ := engine.ParseEngine(t.Engine); !eng.TransferLibrary() {
			continue
		}
		if j := c.engineOnHost(i); j >= 0 {
			t.Role = c.Targets[j].Role
		}
	}
}

// validateServes rejects a serves that names no other target.
func (c *Config) validateServes(file string) []error {
	var errs []error
	for i, t := range c.Targets {
		if t.Serves == "" {
			continue
		}
		if j := c.targetIndex(t.Serves); j < 0 || j == i {
			where := t.DefinedAt
			if where == "" {
				where = file
			}
			errs = append(errs, fmt.Errorf("%s: target %q: serves %q: no other target has that name", where, t.Name, t.Serves))
		}
	}
	return errs
}

func (c *Config) targetIndex(name string) int {
	for i, t := range c.Targets {
		if t.Name == name {
			return i
		}
	}
	return -1
}

// engineOnHost is the one target with a role on the host of target i that
// is not itself a transfer library, or -1 when there is none or several.
func (c *Config) engineOnHost(i int) int {
	host := hostOf(c.Targets[i].URL)
	found := -1
	for j, u := range c.Targets {
		eng, _ := engine.ParseEngine(u.Engine)
		if j == i || u.Role == "" || eng.TransferLibrary() || host == "" || hostOf(u.URL) != host {
			continue
		}
		if found >= 0 {
			return -1
		}
		found = j
	}
	return found
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
