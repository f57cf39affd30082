package api

import (
	"cmp"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Limits of /api/v1/instances' page.
const (
	DefaultInstanceLimit = 50
	MaxInstanceLimit     = 500
)

// Statuses of an instance, worst first: sort=outlier orders by them. They
// are diagnose's classification (docs/web.md#instances-at-fleet-size).
const (
	StatusDown    = diagnose.StatusDown
	StatusStalled = diagnose.StatusStalled
	StatusQueued  = diagnose.StatusQueued
	StatusSlow    = diagnose.StatusSlow
	StatusOK      = diagnose.StatusOK
)

// whyNoneUp is the reason of a group's sum when no instance of it is up.
const whyNoneUp = "no instance of the group is up"

// whyNoModel is the reason of an absent model.
const whyNoModel = "no model label configured and the exposition names no model"

// InstanceQuery is a parsed /api/v1/instances query.
type InstanceQuery struct {
	By     []string // grouping keys, among role, engine, group, model
	Sort   string   // "outlier", a text field or a number field
	Asc    bool
	Q      string // lower case
	Status string // all, down, stalled, queued, slow, outlier, up
	Group  string // one group's id, or "" for every group
	Offset int
	Limit  int
}

var (
	groupKeys    = []string{"role", "engine", "group", "model"}
	textFields   = []string{"name", "role", "engine", "group", "model", "status"}
	statusFilter = []string{"all", "down", "stalled", "queued", "slow", "outlier", "up"}
)

// numberFields are the row values that sort= takes, by the names of the
// snapshot's instances (queues also by the stream's compact names).
var numberFields = map[string]func(*ledger.InstancePoint) ledger.Num{
	"requests_per_second":          func(p *ledger.InstancePoint) ledger.Num { return p.Instant },
	"requests_per_second_window":   func(p *ledger.InstancePoint) ledger.Num { return p.Window },
	"kv_bytes_per_second":          func(p *ledger.InstancePoint) ledger.Num { return p.KVBytes },
	"kv_bytes_per_second_window":   func(p *ledger.InstancePoint) ledger.Num { return p.KVBytesW },
	"running":                      func(p *ledger.InstancePoint) ledger.Num { return p.Running },
	"waiting":                      func(p *ledger.InstancePoint) ledger.Num { return p.Waiting },
	"queues.bootstrap":             func(p *ledger.InstancePoint) ledger.Num { return p.Queues.Bootstrap },
	"queues.inflight":              func(p *ledger.InstancePoint) ledger.Num { return p.Queues.Inflight },
	"queues.prealloc":              func(p *ledger.InstancePoint) ledger.Num { return p.Queues.Prealloc },
	"queues.transfer":              func(p *ledger.InstancePoint) ledger.Num { return p.Queues.Transfer },
	"queue_bootstrap":              func(p *ledger.InstancePoint) ledger.Num { return p.Queues.Bootstrap },
	"queue_inflight":               func(p *ledger.InstancePoint) ledger.Num { return p.Queues.Inflight },
	"queue_prealloc":               func(p *ledger.InstancePoint) ledger.Num { return p.Queues.Prealloc },
	"queue_transfer":               func(p *ledger.InstancePoint) ledger.Num { return p.Queues.Transfer },
	"kv_cache_usage_ratio":         func(p *ledger.InstancePoint) ledger.Num { return p.KVUsage },
	"prompt_tokens_per_second":     func(p *ledger.InstancePoint) ledger.Num { return p.PromptTPS },
	"generation_tokens_per_second": func(p *ledger.InstancePoint) ledger.Num { return p.GenTPS },
}

// ParseInstanceQuery reads /api/v1/instances' parameters; a bad value is an
// error of one line that names it.
func ParseInstanceQuery(v url.Values) (InstanceQuery, error) {
	q := InstanceQuery{By: []string{"group", "role"}, Sort: "outlier", Status: "all", Limit: DefaultInstanceLimit}
	if s := v.Get("by"); s != "" {
		q.By = nil
		for _, k := range strings.Split(s, ",") {
			k = strings.TrimSpace(k)
			if !slices.Contains(groupKeys, k) {
				return q, fmt.Errorf("by=%q: want a comma list of %s", s, strings.Join(groupKeys, ", "))
			}
			if !slices.Contains(q.By, k) {
				q.By = append(q.By, k)
			}
		}
	}
	if s := v.Get("sort"); s != "" {
		if s != "outlier" && !slices.Contains(textFields, s) && numberFields[s] == nil {
			return q, fmt.Errorf("sort=%q: want outlier, %s or a number field of the instance (e.g. requests_per_second_window, waiting)", s, strings.Join(textFields, ", "))
		}
		q.Sort = s
	}
	// Text sorts a to z; numbers, outliers and statuses worst (largest) first.
	q.Asc = q.Sort != "outlier" && q.Sort != "status" && numberFields[q.Sort] == nil
	switch o := v.Get("order"); o {
	case "":
	case "asc", "desc":
		q.Asc = o == "asc"
	default:
		return q, fmt.Errorf("order=%q: want asc or desc", o)
	}
	q.Q = strings.ToLower(strings.TrimSpace(v.Get("q")))
	if s := v.Get("status"); s != "" {
		if !slices.Contains(statusFilter, s) {
			return q, fmt.Errorf("status=%q: want one of %s", s, strings.Join(statusFilter, ", "))
		}
		q.Status = s
	}
	q.Group = v.Get("group")
	intParam := func(name string, p *int, hi int) error {
		s := v.Get(name)
		if s == "" {
			return nil
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > hi {
			return fmt.Errorf("%s=%q: want an integer from 0 to %d", name, s, hi)
		}
		*p = n
		return nil
	}
	if err := intParam("offset", &q.Offset, math.MaxInt32); err != nil {
		return q, err
	}
	if err := intParam("limit", &q.Limit, MaxInstanceLimit); err != nil {
		return q, err
	}
	return q, nil
}

// InstanceTable is the body of /api/v1/instances.
type InstanceTable struct {
	T       *int64          `json:"t"` // Unix ms of the point; null before the first
	Window  float64         `json:"window_seconds"`
	Total   int             `json:"total"`
	Matched int             `json:"matched"`
	Counts  map[string]int  `json:"counts"`
	Groups  []InstanceGroup `json:"groups"`
	Rows    []InstanceRow   `json:"rows"`
}

// InstanceGroup sums the instances that share the values of the by= keys.
// A sum is over the up instances that have the value; it is null (with
// the reason) when none has.
type InstanceGroup struct {
	ID        string            `json:"id"`
	Key       map[string]string `json:"key"`
	Instances int               `json:"instances"`
	Up        int               `json:"up"`
	Down      int               `json:"down"`
	Stalled   int               `json:"stalled"`
	Flagged   int               `json:"flagged"`

	Window       *float64          `json:"requests_per_second_window"`
	Instant      *float64          `json:"requests_per_second"`
	Waiting      *float64          `json:"waiting"`
	Running      *float64          `json:"running"`
	KVUsageMax   *float64          `json:"kv_cache_usage_ratio_max"`
	WindowMedian *float64          `json:"requests_per_second_window_median"`
	Reasons      map[string]string `json:"reasons,omitempty"`
}

// InstanceRow is one instance of the page. Values is the instance as the
// snapshot encodes it, its absences' reasons moved to Reasons.
type InstanceRow struct {
	Name      string            `json:"name"`
	Role      string            `json:"role"`
	Engine    string            `json:"engine"`
	Group     string            `json:"group"`
	Model     string            `json:"model,omitempty"`
	Up        bool              `json:"up"`
	Status    string            `json:"status"`
	Flags     []string          `json:"flags,omitempty"`
	LastError string            `json:"last_error,omitempty"`
	Values    jsonRaw           `json:"values"`
	Reasons   map[string]string `json:"reasons,omitempty"`

	// Point is the ledger's entry, for the handler to encode as Values.
	Point *ledger.InstancePoint `json:"-"`
}

// jsonRaw is a pre-encoded JSON value (null when empty).
type jsonRaw []byte

func (r jsonRaw) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

func (r *jsonRaw) UnmarshalJSON(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}

// inst is one instance's standing within the fleet.
type inst struct {
	*diagnose.Standing
	p       *ledger.InstancePoint
	model   string
	lastErr string
	byName  int // position in name order, the tie-break
	gid     int // index of its group in the table
}

// RankInstances builds the instance table of p: every instance classified
// against its peers by diagnose.ClassifyInstances, grouped by q.By,
// filtered, sorted and paged. meta gives each target's model and last
// error; each instance's group is its pool. It reads
// p only and runs in O(n log n) of p's instances.
func RankInstances(p *ledger.Point, meta map[string]ledger.TargetMeta, window float64, q InstanceQuery) InstanceTable {
	t := InstanceTable{Window: window, Counts: map[string]int{StatusDown: 0, StatusStalled: 0, StatusQueued: 0, StatusSlow: 0},
		Groups: []InstanceGroup{}, Rows: []InstanceRow{}}
	if p == nil {
		return t
	}
	ms := p.Time.UnixMilli()
	t.T = &ms
	lastError := func(target string) string { return meta[target].LastError }
	standings := diagnose.ClassifyInstances(p.Instances, window, lastError)
	ins := make([]inst, len(p.Instances))
	for i := range p.Instances {
		ip := &p.Instances[i]
		m := meta[ip.Target]
		ins[i] = inst{Standing: &standings[i], p: ip, model: m.ShownModel(), lastErr: m.LastError}
		if s := ins[i].Status; s != StatusOK {
			t.Counts[s]++
		}
	}
	t.Total = len(ins)
	t.Groups = groupInstances(ins, q.By)
	nameOrder(ins)

	matched := make([]*inst, 0, len(ins))
	for i := range ins {
		if in := &ins[i]; keep(in, t.Groups, q) {
			matched = append(matched, in)
		}
	}
	t.Matched = len(matched)
	sortInstances(matched, q)
	lo := min(q.Offset, len(matched))
	hi := min(lo+q.Limit, len(matched))
	for _, in := range matched[lo:hi] {
		ip := in.p
		row := InstanceRow{Name: ip.Target, Role: ip.Role, Engine: ip.Engine, Group: in.Group, Model: in.model,
			Up: ip.Up, Status: in.Status, Flags: in.Flags, Point: ip}
		if !ip.Up {
			row.LastError = in.lastErr
		}
		if in.model == "" {
			row.Reasons = map[string]string{"model": whyNoModel}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// groupKey is an instance's values of the by= keys ("" where not grouped).
type groupKey struct{ role, engine, group, model string }

func keyOf(in *inst, by []string) groupKey {
	var k groupKey
	for _, b := range by {
		switch b {
		case "role":
			k.role = in.p.Role
		case "engine":
			k.engine = in.p.Engine
		case "group":
			k.group = in.Group
		case "model":
			k.model = in.model
			if k.model == "" {
				k.model = noModel
			}
		}
	}
	return k
}

// noModel stands for an absent model in a group's key and id.
const noModel = "(no model)"

// groupAcc accumulates one group's sums.
type groupAcc struct {
	window, instant, waiting, running ledger.Num
	usageMax                          ledger.Num
	windows                           []float64
}

// groupInstances sums the instances by the by= keys, worst group first,
// and sets each instance's gid.
func groupInstances(ins []inst, by []string) []InstanceGroup {
	idx := map[groupKey]int{}
	var groups []InstanceGroup
	var accs []groupAcc
	for i := range ins {
		in := &ins[i]
		k := keyOf(in, by)
		g, ok := idx[k]
		if !ok {
			g = len(groups)
			idx[k] = g
			key := make(map[string]string, len(by))
			parts := make([]string, len(by))
			for j, b := range by {
				parts[j] = map[string]string{"role": k.role, "engine": k.engine, "group": k.group, "model": k.model}[b]
				key[b] = parts[j]
			}
			groups = append(groups, InstanceGroup{ID: strings.Join(parts, "/"), Key: key})
			none := ledger.Absent(whyNoneUp)
			accs = append(accs, groupAcc{window: none, instant: none, waiting: none, running: none, usageMax: none})
		}
		in.gid = g
		gr, a := &groups[g], &accs[g]
		gr.Instances++
		switch {
		case !in.p.Up:
			gr.Down++
		default:
			gr.Up++
			a.add(in.p)
		}
		if in.Status == StatusStalled {
			gr.Stalled++
		}
		if in.Status != StatusOK {
			gr.Flagged++
		}
	}
	for g := range groups {
		gr, a := &groups[g], &accs[g]
		med := diagnose.Median(a.windows)
		if len(a.windows) == 0 {
			med = a.window
		}
		set := func(name string, dst **float64, n ledger.Num) {
			if n.OK() {
				v := n.V
				*dst = &v
				return
			}
			if gr.Reasons == nil {
				gr.Reasons = map[string]string{}
			}
			gr.Reasons[name] = n.Why
		}
		set("requests_per_second_window", &gr.Window, a.window)
		set("requests_per_second", &gr.Instant, a.instant)
		set("waiting", &gr.Waiting, a.waiting)
		set("running", &gr.Running, a.running)
		set("kv_cache_usage_ratio_max", &gr.KVUsageMax, a.usageMax)
		set("requests_per_second_window_median", &gr.WindowMedian, med)
	}
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		x, y := &groups[a], &groups[b]
		return cmp.Or(cmp.Compare(y.Down, x.Down), cmp.Compare(y.Stalled, x.Stalled), cmp.Compare(y.Flagged, x.Flagged), strings.Compare(x.ID, y.ID))
	})
	out := make([]InstanceGroup, len(groups))
	rank := make([]int, len(groups))
	for i, g := range order {
		out[i] = groups[g]
		rank[g] = i
	}
	for i := range ins {
		ins[i].gid = rank[ins[i].gid]
	}
	return out
}

// add sums one up instance: a sum starts at its first present term, and
// keeps the first absent term's reason until then.
func (a *groupAcc) add(ip *ledger.InstancePoint) {
	sum := func(s *ledger.Num, x ledger.Num) {
		switch {
		case x.OK() && s.OK():
			s.V += x.V
		case x.OK():
			*s = x
		case s.Why == whyNoneUp:
			*s = x // the first reason an up instance gives
		}
	}
	sum(&a.window, ip.Window)
	sum(&a.instant, ip.Instant)
	sum(&a.waiting, ip.Waiting)
	sum(&a.running, ip.Running)
	switch u := ip.KVUsage; {
	case u.OK() && (!a.usageMax.OK() || u.V > a.usageMax.V):
		a.usageMax = u
	case !u.OK() && !a.usageMax.OK() && a.usageMax.Why == whyNoneUp:
		a.usageMax = u
	}
	if ip.Window.OK() {
		a.windows = append(a.windows, ip.Window.V)
	}
}

// keep reports whether in passes q's filters.
func keep(in *inst, groups []InstanceGroup, q InstanceQuery) bool {
	switch q.Status {
	case "all":
	case "outlier":
		if in.Status == StatusOK {
			return false
		}
	case "up":
		if !in.p.Up {
			return false
		}
	default:
		if in.Status != q.Status {
			return false
		}
	}
	if q.Group != "" && groups[in.gid].ID != q.Group {
		return false
	}
	if q.Q == "" {
		return true
	}
	for _, s := range []string{in.p.Target, in.p.Role, in.p.Engine, in.Group, in.model, in.Status} {
		if strings.Contains(strings.ToLower(s), q.Q) {
			return true
		}
	}
	for _, f := range in.Flags {
		if strings.Contains(strings.ToLower(f), q.Q) {
			return true
		}
	}
	return false
}

// sortInstances orders the matched instances by q. Absent numbers go last
// in either order; ties fall back to the name.
func sortInstances(ins []*inst, q InstanceQuery) {
	dir := 1
	if !q.Asc {
		dir = -1
	}
	var by func(a, b *inst) int
	switch f := numberFields[q.Sort]; {
	case q.Sort == "outlier":
		// Worst first: status, then severity within it; asc reverses.
		dir = -dir
		by = func(a, b *inst) int {
			return dir * cmp.Or(cmp.Compare(a.Rank, b.Rank), cmp.Compare(b.Severity, a.Severity))
		}
	case f != nil:
		by = func(a, b *inst) int {
			x, y := f(a.p), f(b.p)
			switch {
			case x.OK() && y.OK():
				return dir * cmp.Compare(x.V, y.V)
			case x.OK():
				return -1
			case y.OK():
				return 1
			}
			return 0
		}
	default:
		text := map[string]func(*inst) string{
			"name": func(i *inst) string { return i.p.Target }, "role": func(i *inst) string { return i.p.Role },
			"engine": func(i *inst) string { return i.p.Engine }, "group": func(i *inst) string { return i.Group },
			"model": func(i *inst) string { return i.model },
		}[q.Sort]
		by = func(a, b *inst) int { return dir * strings.Compare(text(a), text(b)) }
		if q.Sort == "status" { // worst first is "desc"
			by = func(a, b *inst) int { return -dir * cmp.Compare(a.Rank, b.Rank) }
		}
	}
	slices.SortFunc(ins, func(a, b *inst) int {
		return cmp.Or(by(a, b), cmp.Compare(a.byName, b.byName))
	})
}

// nameOrder sets each instance's position in name order. The ledger's
// points list instances by name already, so this is one pass unless they
// come in another order.
func nameOrder(ins []inst) {
	sorted := true
	for i := range ins {
		ins[i].byName = i
		if i > 0 && ins[i-1].p.Target > ins[i].p.Target {
			sorted = false
		}
	}
	if sorted {
		return
	}
	idx := make([]int, len(ins))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(ins[a].p.Target, ins[b].p.Target) })
	for pos, i := range idx {
		ins[i].byName = pos
	}
}
