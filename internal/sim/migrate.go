package sim

import (
	"time"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// Migrations (docs/sim.md#what-is-modelled): behind Dynamo's frontend, a request
// whose prefill or decode worker goes down is not lost. The frontend sends
// it again (lib/llm/src/migration.rs) to the workers left, keeping its
// arrival: it counts the attempt in
// dynamo_frontend_model_migration_total{migration_type}, ongoing_request
// where its client already had the first token (the stream broke
// mid-response), new_request otherwise; the request itself is counted once,
// when answered. The new attempt starts over: prefill, the KV copy and
// decode again, the engines timing it from its re-dispatch; the client's
// TTFT is its first token's, whichever attempt made it. Without Dynamo's
// frontend a lost request stays lost, as before.

// migrates says whether g's router sends lost requests again.
func (g *group) migrates() bool { return g.spec.Router == string(ptd.DynamoFrontend) }

// lost notes r, in flight on an instance going down, for migration where
// its group migrates; takeDown sends the noted requests again once the
// instance is down, each once.
func (m *Model) lost(r *request) {
	if !r.grp.migrates() || r.migrating {
		return
	}
	r.migrating = true
	m.migrants = append(m.migrants, r)
}

// migrate sends the noted requests again, in the order they were lost.
func (m *Model) migrate() {
	rs := m.migrants
	m.migrants = nil
	for _, old := range rs {
		g := old.grp
		ongoing := old.streamed || old.generated > 0
		if ongoing {
			g.route.ongoing = append(g.route.ongoing, m.now)
		} else {
			g.route.newRequest = append(g.route.newRequest, m.now)
		}
		// A new attempt: the old one's events (a batch being computed, a
		// copy on the wire) still name the old request, which stays
		// aborted.
		r := &request{id: old.id, grp: g, arrival: old.arrival, routed: old.routed, sent: m.now,
			stop: old.stop, hit: old.hit, streamed: ongoing, clientFirst: old.clientFirst}
		if old.decodeOnly {
			m.sendToDecode(g, r)
			continue
		}
		p := pick(g.prefill, &g.rrP, prefillLoad)
		if p == nil {
			m.dropped++
			continue
		}
		m.toPrefill(r, p)
	}
}

// MigrationTruth is a group's migrations at an instant: the requests its
// router sent again after a worker was lost, by Dynamo's migration_type.
type MigrationTruth struct {
	NewRequest int64 `json:"new_request"`
	Ongoing    int64 `json:"ongoing_request"`
}

// Total is every migration.
func (t MigrationTruth) Total() int64 { return t.NewRequest + t.Ongoing }

// MigrationTruth is group's migrations by d (zero for a group that
// migrates none).
func (m *Model) MigrationTruth(group string, d time.Duration) MigrationTruth {
	t := min(int64(d), m.now)
	for _, g := range m.groups {
		if g.spec.Name == group {
			return MigrationTruth{NewRequest: int64(countAt(g.route.newRequest, t)), Ongoing: int64(countAt(g.route.ongoing, t))}
		}
	}
	return MigrationTruth{}
}

// renderMigrations appends Dynamo's migration counter, a child per
// migration_type once one happened.
func renderMigrations(dst []byte, g *group, model string, now int64) []byte {
	n, o := countAt(g.route.newRequest, now), countAt(g.route.ongoing, now)
	if n+o == 0 {
		return dst
	}
	const name = "dynamo_frontend_model_migration_total"
	dst = appendHeader(dst, name, "Total number of request migrations due to worker unavailability", "counter")
	for _, c := range [...]struct {
		typ string
		v   int
	}{{"new_request", n}, {"ongoing_request", o}} {
		if c.v > 0 {
			dst = appendSample(dst, name, "", []label{{"migration_type", c.typ}, {"model", model}}, float64(c.v))
		}
	}
	return dst
}
