package sim

import (
	"testing"
	"time"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// A decode and a prefill instance go down behind a router. Dynamo's
// frontend sends every request they held again: each request that
// arrived completes exactly once, its migrations are counted by type as
// the truth has them. llm-d's EPP does not migrate: requests are lost,
// as before.
func TestMigrationsKeepEveryRequest(t *testing.T) {
	f := func(rt string, migrates bool) {
		t.Run(rt, func(t *testing.T) {
			sc := baseScenario()
			sc.Groups = sc.Groups[:1]
			g := &sc.Groups[0]
			g.Router = rt
			sc.Restarts = []Restart{{Instance: "vllm-d0", At: 20 * time.Second, Down: 3 * time.Second},
				{Instance: "vllm-p1", At: 30 * time.Second, Down: 3 * time.Second}}
			m, err := NewModel(sc, 5, time.Unix(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			done := map[uint64]int{}
			m.OnComplete(func(c Completion) { done[c.ID]++ })
			m.AdvanceTo(40 * time.Second)
			arrived := m.RouterArrivals(g.Name, 40*time.Second)
			m.AdvanceTo(70 * time.Second)
			lost := 0
			for id := uint64(1); id <= uint64(arrived); id++ {
				switch done[id] {
				case 0:
					lost++
				case 1:
				default:
					t.Errorf("request %d completed %d times", id, done[id])
				}
			}
			mt := m.MigrationTruth(g.Name, m.Now())
			t.Logf("%d of %d requests lost, migrations %+v", lost, arrived, mt)
			if !migrates {
				if lost == 0 || mt.Total() != 0 {
					t.Errorf("%d lost and %+v migrated without a migrating router", lost, mt)
				}
				return
			}
			if lost != 0 || mt.NewRequest == 0 || mt.Ongoing == 0 {
				t.Errorf("%d requests lost, migrations %+v: want none lost, both types", lost, mt)
			}
			body, f, err := m.Exposition(g.Name+"-router", nil)
			if err != nil {
				t.Fatal(err)
			}
			o, err := ptd.NewReader(ptd.DynamoFrontend, ptd.Router, ptd.KVAuto).Read(body, f.ContentType())
			if err != nil {
				t.Fatal(err)
			}
			var got float64
			for _, c := range o.Counters {
				if c.Metric == ptd.Migrated {
					got += c.Value
				}
			}
			if got != float64(mt.Total()) {
				t.Errorf("the frontend counts %g migrations, truth %+v\n%s", got, mt, body)
			}
			if before := m.MigrationTruth(g.Name, 25*time.Second); before.Total() == 0 || before.Total() == mt.Total() {
				t.Errorf("migrations by 25 s %+v, by 70 s %+v: want the decode's at 20 s, then the prefill's", before, mt)
			}
		})
	}
	f(string(ptd.DynamoFrontend), true)
	f(string(ptd.LLMDEPP), false)
}
