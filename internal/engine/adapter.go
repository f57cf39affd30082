package engine

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/common/model"
)

// An Adapter is one engine's dialect of the Prometheus exposition: which
// families it owns, what each means, and how its labels split an instance
// into groups and replicated ranks. Adapters are plain tables; the Reader
// does the reading for all of them. Each engine registers its adapter from
// its own file (vllm.go, sglang.go, trtllm.go) with Register; docs/adapters.md
// says how to add one.
type Adapter struct {
	// Engine is the name a target's configuration uses (engine: vllm).
	Engine Engine
	// Aliases are other spellings ParseEngine accepts.
	Aliases []string
	// Display names the engine in messages ("vLLM").
	Display string
	// Order places the engine in lists shown to users (lower first).
	Order int

	// Prefix claims every family whose name starts with it: one family
	// is enough to detect the engine, whichever it is.
	Prefix string
	// PrefixOptional: older builds expose the same families without the
	// prefix. A bare name is claimed only when it is in Families (and not
	// PrefixOnly), since bare names are generic.
	PrefixOptional bool
	// Listed: the families share no prefix of their own (a transfer
	// library's generic names, such as Mooncake's transfer_bytes_total), so
	// only the names in Families claim a family; Prefix only names the
	// adapter in messages.
	Listed bool

	// Families is the engine's metric table (its KV connectors add theirs,
	// see Connector).
	Families []Family

	// ModelLabel holds the served model's name; Unset is a value that
	// means "no value" (TensorRT-LLM writes "undefined").
	ModelLabel string
	Unset      string
	// RoleLabel, when set, tells the instance's role from its value
	// ("prefill" or "decode"), for targets configured without a role.
	RoleLabel string
	// GroupLabels tell apart the processes of one instance (data-parallel
	// ranks, engine cores, pids): their series add up.
	GroupLabels []string
	// RankLabels (at most two, least significant first) are replicated
	// tensor/pipeline-parallel ranks: every rank of a group reports the
	// same requests, so only the lowest rank of each group is read.
	RankLabels []string
	// SplitLabels mark series that split a total (SGLang's priority): a
	// series with a non-empty value of one of them is not read.
	SplitLabels []string
	// FinishedLabel and NotCompleted: the completion families marked
	// Finished carry the finish reason in FinishedLabel, and count these
	// reasons as other metrics (aborted or failed requests are not
	// completions).
	FinishedLabel string
	NotCompleted  []Reason
	// FinishedAliases are other spellings of FinishedLabel, read where it
	// is absent (an imitation of the engine that names the label its own
	// way): without them an aborted request would count as completed.
	FinishedAliases []string

	// LatencyPanels: the generated Grafana dashboards draw the engine's
	// TTFT, ITL and E2E histograms (its families of those metrics), opt-in
	// per engine.
	LatencyPanels bool

	// Traits: how the engine's numbers behave, for the readers downstream
	// that interpret them (docs/adapters.md#traits).

	// WaitingKVReady: on a decode instance the Waiting gauge holds only
	// requests whose KV has arrived, ready to run. SGLang reserves the
	// decode KV before prefill and keeps requests still receiving it in
	// queues of their own, so a waiting request there means a full batch;
	// vLLM's waiting gauge also counts requests still waiting for their KV
	// (docs/advisor.md#limits).
	WaitingKVReady bool
	// TransferLibrary: the endpoint is a transfer library's own (NIXL's
	// telemetry, the Mooncake transfer engine), not an engine's: its KV
	// bytes count the same transfers an engine's connector may count too,
	// so they enter the KV sums only where no engine's connector counts any
	// (docs/design.md#kv-sources-and-the-side-each-counts).
	TransferLibrary bool
	// DecodeFromArrival: on a decode instance the TTFT and E2E histograms
	// time the whole request from its arrival, because the router sends
	// every request to prefill and decode at once (SGLang's bootstrap).
	// Without it a decode instance receives the request once prefill is
	// done (vLLM's and TensorRT-LLM's two legs), and its TTFT and E2E are
	// the decode leg's alone (docs/advisor.md#the-whole-requests-slo).
	DecodeFromArrival bool
	// Mirror names the engine whose families these are, re-exported under
	// another prefix (vLLM under Ray): the generated rules read the
	// original's only, so that every rule is not written twice.
	Mirror Engine
	// Frontend: the endpoint is a request router in front of the engines
	// (Dynamo's frontend, llm-d's EPP, the vLLM and SGLang routers): its
	// targets play the role router, need no role configured and count in
	// no stage; the ledger reads their arrivals (routers.go).
	Frontend bool
}

// Reason maps one finish reason to the metric it counts as.
type Reason struct {
	Value  string
	Metric Metric
}

// LabelValue reads the value of the label Label as the metric Metric.
type LabelValue struct {
	Label  string
	Metric Metric
}

// Family is one row of an engine's metric table.
type Family struct {
	// Name as exposed: counters with their _total, histograms without
	// _bucket/_sum/_count. For an adapter with an optional prefix, write
	// the prefixed name; the bare one is accepted too.
	Name string
	// Type is counter, gauge or histogram. Untyped samples (no # TYPE
	// line) are read by their name.
	Type   model.MetricType
	Metric Metric
	// Finished: the family carries the adapter's FinishedLabel.
	Finished bool
	// ByLabel and ByValue: the value of the label ByLabel tells which
	// metric a series counts (vLLM's prompt tokens by source, NIXL's errors
	// by status, SGLang's latency by stage); a series with another value is
	// not read. Metric is unused then.
	ByLabel string
	ByValue []Reason
	// ByFallback: values of ByLabel read like ByValue, but as a deprecated
	// name is: only where no current family of the same metric is in the
	// exposition (SGLang's idle stage, where the idle counter is absent).
	ByFallback []Reason
	// AlsoLabel and AlsoValue: a series whose label AlsoLabel has one of
	// these values is read a second time, as that value's metric (Dynamo's
	// errors of error_type="overload" are errors and load shed too).
	AlsoLabel string
	AlsoValue []Reason
	// FromLabels: an info gauge (value 1) whose labels carry the values:
	// each listed label's value is read as its metric (vLLM's
	// cache_config_info); a label absent or not a number gives no value.
	// At most two.
	FromLabels []LabelValue
	// Sizes: a histogram of per-transfer sizes whose _sum is the counter
	// Metric and whose _count is the counter Count; its buckets are not read.
	Sizes bool
	Count Metric
	// Scale multiplies values (and a size histogram's _sum) into the
	// canonical unit; LEScale does so for a histogram's bounds and _sum.
	Scale, LEScale float64
	// Deprecated: an older name (a version rename), read only when no
	// current family of the same metric is in the exposition; engines
	// export both for a while.
	Deprecated bool
	// KV is set for the families of a KV connector (from Connector.Source).
	KV KVSource
	// Role: the family counts one phase of a multi-role process (the
	// TensorRT-LLM disaggregated server); read only on a target of that role.
	Role Role
	// PrefixOnly: never exposed without the adapter's optional prefix.
	PrefixOnly bool
	// Skip is why a known family is deliberately not read; Note says the
	// reason is worth telling the user on every scrape.
	Skip string
	Note bool
}

// A Connector is a KV-transfer connector whose families appear in one
// engine's exposition (vLLM's FlagCX, NIXL and Mooncake, SGLang's own,
// Dynamo's on TensorRT-LLM). Its families are read through that engine's
// adapter and tagged with Source, so kv_source can select one. Each
// connector counts a transfer on one side only (the sender or the puller),
// so adding its bytes over every target counts each transfer once.
type Connector struct {
	Source KVSource
	// Display names the connector in messages ("FlagCX").
	Display string
	Engine  Engine
	// Order places the connector in lists shown to users (lower first).
	Order    int
	Families []Family
}

// registry holds the adapters and connectors. Registration happens at
// init; each Reader takes a snapshot when it is made.
var registry struct {
	sync.RWMutex
	adapters   []*adapter
	connectors []Connector
	formats    map[Format]format
}

// adapter is a registered Adapter with its lookup tables.
type adapter struct {
	Adapter
	plain map[string]*Family // counters, gauges and plain skips, by sample name
	hist  map[string]*Family // histograms, by family name
}

// Register adds an engine's adapter. It panics on a bad table: adapters are
// registered at init, so a mistake shows up in every test.
func Register(a Adapter) {
	registry.Lock()
	defer registry.Unlock()
	if a.Engine == EngineAuto || a.Prefix == "" {
		panic("engine: an adapter needs an engine name and a prefix")
	}
	for _, have := range registry.adapters {
		if have.Engine == a.Engine {
			panic(fmt.Sprintf("engine: adapter %s registered twice", a.Engine))
		}
		if a.Listed || have.Listed {
			continue
		}
		if strings.HasPrefix(a.Prefix, have.Prefix) || strings.HasPrefix(have.Prefix, a.Prefix) {
			panic(fmt.Sprintf("engine: prefixes %q (%s) and %q (%s) overlap", a.Prefix, a.Engine, have.Prefix, have.Engine))
		}
	}
	if len(registry.adapters) == 64 {
		panic("engine: at most 64 adapters") // the Reader keeps them in a bit set
	}
	if len(a.RankLabels) > 2 {
		panic("engine: at most two rank labels")
	}
	registry.adapters = append(registry.adapters, &adapter{Adapter: a})
	slices.SortStableFunc(registry.adapters, func(x, y *adapter) int { return cmp.Compare(x.Order, y.Order) })
	reindex()
}

// Unregister removes an engine's adapter, connectors and formats, for
// tests that register one of their own.
func Unregister(e Engine) {
	registry.Lock()
	defer registry.Unlock()
	registry.adapters = slices.DeleteFunc(registry.adapters, func(a *adapter) bool { return a.Engine == e })
	registry.connectors = slices.DeleteFunc(registry.connectors, func(c Connector) bool { return c.Engine == e })
	for f, v := range registry.formats {
		if v.engine == e {
			delete(registry.formats, f)
		}
	}
	reindex()
}

// RegisterConnector adds a KV connector's families to its engine's adapter
// (registered before or after it).
func RegisterConnector(c Connector) {
	registry.Lock()
	defer registry.Unlock()
	for _, have := range registry.connectors {
		if have.Source == c.Source {
			panic(fmt.Sprintf("engine: connector %s registered twice", c.Source))
		}
	}
	registry.connectors = append(registry.connectors, c)
	slices.SortStableFunc(registry.connectors, func(x, y Connector) int { return cmp.Compare(x.Order, y.Order) })
	reindex()
}

// reindex rebuilds every adapter's lookup tables (under the write lock),
// as new values: Readers made before keep the snapshot they took.
func reindex() {
	for i, old := range registry.adapters {
		a := &adapter{Adapter: old.Adapter, plain: make(map[string]*Family), hist: make(map[string]*Family)}
		a.add(a.Families, KVAuto)
		for _, c := range registry.connectors {
			if c.Engine == a.Engine {
				a.add(c.Families, c.Source)
			}
		}
		registry.adapters[i] = a
	}
}

func (a *adapter) add(fams []Family, kv KVSource) {
	for i := range fams {
		f := fams[i] // a copy: the registry owns its tables
		if kv != KVAuto {
			f.KV = kv
		}
		m := a.plain
		if f.Type == model.MetricTypeHistogram {
			m = a.hist
		}
		if len(f.FromLabels) > 2 {
			panic(fmt.Sprintf("engine: family %s reads more than two labels", f.Name))
		}
		names := []string{f.Name}
		if bare, ok := strings.CutPrefix(f.Name, a.Prefix); ok && a.PrefixOptional && !f.PrefixOnly {
			names = append(names, bare)
		}
		for _, n := range names {
			if _, dup := m[n]; dup {
				panic(fmt.Sprintf("engine: family %s listed twice for %s", n, a.Engine))
			}
			m[n] = &f
		}
	}
}

// snapshot returns the registered adapters in order.
func snapshot() []*adapter {
	registry.RLock()
	defer registry.RUnlock()
	return slices.Clone(registry.adapters)
}

// Adapters returns the registered adapters in order, each with its
// connectors' families appended (for generated queries and documentation).
func Adapters() []Adapter {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]Adapter, 0, len(registry.adapters))
	for _, a := range registry.adapters {
		c := a.Adapter
		c.Families = slices.Clone(a.Families)
		for _, k := range registry.connectors {
			if k.Engine == a.Engine {
				for _, f := range k.Families {
					f.KV = k.Source
					c.Families = append(c.Families, f)
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// Lookup returns the adapter of engine e.
func Lookup(e Engine) (Adapter, bool) {
	for _, a := range Adapters() {
		if a.Engine == e {
			return a, true
		}
	}
	return Adapter{}, false
}

// Connectors returns the registered KV connectors in order.
func Connectors() []Connector {
	registry.RLock()
	defer registry.RUnlock()
	return slices.Clone(registry.connectors)
}

// Engines lists the registered engines' names in order.
func Engines() []Engine {
	var out []Engine
	for _, a := range snapshot() {
		out = append(out, a.Engine)
	}
	return out
}

// WaitingKVReady reports the trait of the same name of engine e's adapter
// (false for an engine not registered).
func (e Engine) WaitingKVReady() bool {
	registry.RLock()
	defer registry.RUnlock()
	for _, a := range registry.adapters {
		if a.Engine == e {
			return a.WaitingKVReady
		}
	}
	return false
}

// TransferLibrary reports the trait of the same name of engine e's adapter.
func (e Engine) TransferLibrary() bool {
	registry.RLock()
	defer registry.RUnlock()
	for _, a := range registry.adapters {
		if a.Engine == e {
			return a.TransferLibrary
		}
	}
	return false
}

// DecodeFromArrival reports the trait of the same name of engine e's
// adapter (false for an engine not registered).
func (e Engine) DecodeFromArrival() bool {
	a, ok := Lookup(e)
	return ok && a.DecodeFromArrival
}

// KVSourceDisplays lists the registered connectors' display names, for
// messages: "FlagCX, NIXL, …, SGLang or Dynamo".
func KVSourceDisplays() string {
	var out []string
	for _, c := range Connectors() {
		out = append(out, c.Display)
	}
	return orList(out)
}

// ParseEngine accepts a registered engine's name or alias, and auto.
func ParseEngine(s string) (Engine, bool) {
	if s == "" || s == "auto" {
		return EngineAuto, true
	}
	for _, a := range snapshot() {
		if string(a.Engine) == s || slices.Contains(a.Aliases, s) {
			return a.Engine, true
		}
	}
	return EngineAuto, false
}

// EngineChoices lists what ParseEngine accepts, for help and errors:
// "vllm, sglang, trtllm or auto".
func EngineChoices() string {
	var out []string
	for _, e := range Engines() {
		out = append(out, string(e))
	}
	return orList(append(out, "auto"))
}

// KVSourceChoices lists what ParseKVSource accepts, for help and errors:
// "auto, flagcx, …, dynamo or none".
func KVSourceChoices() string {
	out := []string{"auto"}
	for _, c := range Connectors() {
		out = append(out, string(c.Source))
	}
	return orList(append(out, string(KVNone)))
}

// ParseKVSource accepts a registered connector's name, none and auto.
func ParseKVSource(s string) (KVSource, bool) {
	switch k := KVSource(s); k {
	case KVAuto, KVNone:
		return k, true
	case "auto":
		return KVAuto, true
	}
	for _, c := range Connectors() {
		if string(c.Source) == s {
			return c.Source, true
		}
	}
	return KVAuto, false
}

// Family returns the first family of a's table that is read as metric m
// from source kv (KVAuto: the engine's own families), and whether there is one.
func (a Adapter) Family(m Metric, kv KVSource) (Family, bool) {
	for _, f := range a.Families {
		if f.Metric == m && f.KV == kv && f.Skip == "" && !f.Deprecated && f.ByLabel == "" && len(f.FromLabels) == 0 {
			return f, true
		}
	}
	return Family{}, false
}
