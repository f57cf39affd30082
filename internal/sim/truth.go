package sim

import (
	"sort"
	"time"
)

// truthSeries keeps the time of every counted event of one instance, so the
// exact cumulative count at any instant is a binary search away. Memory is
// 8–16 bytes per event: hours of tens of req/s stay in megabytes.
type truthSeries struct {
	prefill []int64
	decode  []int64
	kvT     []int64
	kvBytes []int64 // cumulative bytes after kvT[i]
}

func (s *truthSeries) addPrefill(t int64) { s.prefill = append(s.prefill, t) }
func (s *truthSeries) addDecode(t int64)  { s.decode = append(s.decode, t) }
func (s *truthSeries) addKV(t, bytes int64) {
	var prev int64
	if n := len(s.kvBytes); n > 0 {
		prev = s.kvBytes[n-1]
	}
	s.kvT = append(s.kvT, t)
	s.kvBytes = append(s.kvBytes, prev+bytes)
}

// countAt is the number of events with time <= t.
func countAt(ts []int64, t int64) int {
	return sort.Search(len(ts), func(i int) bool { return ts[i] > t })
}

func (s *truthSeries) at(t int64) Counts {
	c := Counts{
		PrefillCompleted: int64(countAt(s.prefill, t)),
		DecodeCompleted:  int64(countAt(s.decode, t)),
	}
	if n := countAt(s.kvT, t); n > 0 {
		c.KVTransfers = int64(n)
		c.KVBytes = s.kvBytes[n-1]
	}
	return c
}

// Counts are exact cumulative event counts.
//
// PrefillCompleted counts what the engine's prefill completion counter
// counts: for vLLM the prefill leg finishing on P (request_success_total),
// for SGLang the request being returned by P after its KV was sent
// (num_requests_total). DecodeCompleted counts requests finishing on D.
// KVBytes/KVTransfers are attributed to the instance whose connector counts
// the copy: the prefill side for FlagCX and SGLang, the decode side for NIXL.
type Counts struct {
	PrefillCompleted int64 `json:"prefill_completed"`
	DecodeCompleted  int64 `json:"decode_completed"`
	KVBytes          int64 `json:"kv_bytes"`
	KVTransfers      int64 `json:"kv_transfers"`
}

func (c Counts) add(o Counts) Counts {
	return Counts{c.PrefillCompleted + o.PrefillCompleted, c.DecodeCompleted + o.DecodeCompleted,
		c.KVBytes + o.KVBytes, c.KVTransfers + o.KVTransfers}
}

func (c Counts) sub(o Counts) Counts {
	return Counts{c.PrefillCompleted - o.PrefillCompleted, c.DecodeCompleted - o.DecodeCompleted,
		c.KVBytes - o.KVBytes, c.KVTransfers - o.KVTransfers}
}

// InstanceTruth is one instance's ground truth at an instant.
type InstanceTruth struct {
	Name      string `json:"name"`
	Role      string `json:"role"`
	Engine    string `json:"engine"`
	Connector string `json:"connector"`
	Up        bool   `json:"up"`
	// Asleep: in sleep mode (Scenario.Asleep), up and serving nothing.
	Asleep   bool `json:"asleep,omitempty"`
	Restarts int  `json:"restarts"`
	// Counts are cumulative over the whole run, across restarts.
	Counts
	// Exported is what the instance's own counters show at that instant:
	// counts since its current process started (zero while down).
	Exported Counts `json:"exported"`
	// Engines is the instance's DP engines (schedulers); BusySeconds the
	// engine-seconds they spent working over the whole run: a prefill
	// engine computing batches (S tokens each at tokens_per_sec, jitter
	// included), a decode engine running steps. Over an interval, its
	// difference ÷ (seconds × engines) is the busy fraction; idle is the
	// rest.
	Engines     int     `json:"engines"`
	BusySeconds float64 `json:"busy_seconds"`
}

// Truth is the exact state of the simulated cluster at one instant.
type Truth struct {
	At         time.Time `json:"at"`
	AtUnixNano int64     `json:"at_unix_nano"`
	SimSeconds float64   `json:"sim_seconds"` // since the cluster started
	Scenario   string    `json:"scenario"`
	// Bottleneck is the deployment's true bottleneck from the load model
	// (Load); ScenarioBottleneck is what the scenario's author labelled it.
	Bottleneck         string `json:"bottleneck"`
	ScenarioBottleneck string `json:"scenario_bottleneck,omitempty"`
	// Load is every group's stage utilisation and bottleneck (LoadModel).
	Load            Load            `json:"load"`
	BytesPerRequest int64           `json:"bytes_per_request"`
	Totals          Counts          `json:"totals"`
	Instances       []InstanceTruth `json:"instances"`
	Dropped         uint64          `json:"dropped_arrivals"`
	// Routers: the groups' arrivals and P/D decisions, where a group has a
	// router or a decode-only share (router.go).
	Routers []RouterTruth `json:"routers,omitempty"`
	// Shed: the groups' offered and shed load, where a group sheds (shed.go).
	Shed []ShedTruth `json:"shed,omitempty"`
	// Capacity: every group's stages' true capacity per engine (busy.go).
	Capacity []CapacityTruth `json:"capacity"`
}

// Instance returns the named instance's truth (zero value if absent).
func (t Truth) Instance(name string) InstanceTruth {
	for _, it := range t.Instances {
		if it.Name == name {
			return it
		}
	}
	return InstanceTruth{}
}

// TruthAt answers for simulated offset d. Instants after Now are answered as
// of Now (the model never guesses the future); callers advance first.
func (m *Model) TruthAt(d time.Duration) Truth {
	t := int64(d)
	if t > m.now {
		t = m.now
	}
	at := m.epoch.Add(time.Duration(t))
	tr := Truth{
		At: at, AtUnixNano: at.UnixNano(), SimSeconds: float64(t) / 1e9,
		Scenario: m.sc.Name, ScenarioBottleneck: m.sc.Bottleneck, BytesPerRequest: m.sc.KVBytesPerRequest,
		Dropped: m.dropped, Load: m.load,
	}
	tr.Bottleneck = m.load.Bottleneck
	tr.Routers = m.routerTruth(t)
	tr.Shed = m.shedTruth(t)
	tr.Capacity = m.capacityTruth()
	for _, in := range m.instances {
		c := in.truth.at(t)
		restarts, up, start := 0, true, int64(0)
		for i, u := range in.upAt {
			if u <= t {
				restarts, start = i, u
			}
		}
		// Down between a down event and the next up: find the last down.
		for _, r := range m.sc.Restarts {
			if r.Instance == in.name && int64(r.At) <= t && t < int64(r.At+r.Down) {
				up = false
			}
		}
		exp := Counts{}
		if up {
			exp = c.sub(in.truth.at(start))
		}
		tr.Instances = append(tr.Instances, InstanceTruth{
			Name: in.name, Role: in.role, Engine: in.grp.spec.Engine, Connector: in.grp.spec.Connector,
			Up: up, Asleep: in.asleep, Restarts: restarts, Counts: c, Exported: exp,
			Engines: len(in.engines), BusySeconds: in.busySeconds(t),
		})
		tr.Totals = tr.Totals.add(c)
	}
	return tr
}
