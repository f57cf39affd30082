package ledger

import (
	"sort"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/scrape"
)

// TargetStatus is the scrape health and cumulative state of one target.
type TargetStatus struct {
	Name           string                   `json:"name"`
	URL            string                   `json:"url"`
	Role           string                   `json:"role"`
	Engine         string                   `json:"engine"`
	Model          string                   `json:"model,omitempty"`
	Up             bool                     `json:"up"`
	LastError      string                   `json:"last_error,omitempty"`
	LastScrape     time.Time                `json:"last_scrape,omitzero"`
	LastSuccess    time.Time                `json:"last_success,omitzero"`
	ScrapeDuration float64                  `json:"scrape_duration_seconds"`
	ScrapeBytes    int                      `json:"scrape_bytes"`
	Failures       map[scrape.Reason]uint64 `json:"failures,omitempty"`
	CounterResets  uint64                   `json:"counter_resets"`
	Notes          []string                 `json:"notes,omitempty"`
	SchedulerMode  string                   `json:"scheduler_mode,omitempty"`

	// Totals are the reset-adjusted counters (by canonical name), for export.
	Totals map[string]float64 `json:"totals,omitempty"`
	// Gauges are the newest sample's gauges, present ones only.
	Gauges map[string]float64 `json:"gauges,omitempty"`
	Fresh  bool               `json:"-"`

	// ScrapedBytes and ScrapedSamples count every body's bytes and every
	// successfully read body's samples since the target was added: what
	// the target costs to watch.
	ScrapedBytes   uint64 `json:"-"`
	ScrapedSamples uint64 `json:"-"`
}

// ScrapeHealth is what the scrapes went through since the targets were
// added: every failed scrape by reason, how many targets had one, and the
// targets whose request counters went back to zero (a restart), for the page's top
// row; cheap at any fleet size, unlike every target's status.
type ScrapeHealth struct {
	Failures      map[scrape.Reason]uint64 `json:"failures,omitempty"`
	TargetsFailed int                      `json:"targets_failed"`
	// Restarted are the targets whose request counters went back to
	// zero, by name.
	Restarted []string `json:"restarted,omitempty"`
}

// ScrapeHealth sums the targets' failed scrapes and lists those that
// restarted.
func (l *Ledger) ScrapeHealth() ScrapeHealth {
	l.mu.Lock()
	defer l.mu.Unlock()
	var h ScrapeHealth
	for _, name := range l.names {
		t := l.targets[name]
		if len(t.failures) > 0 {
			h.TargetsFailed++
			if h.Failures == nil {
				h.Failures = map[scrape.Reason]uint64{}
			}
			for k, v := range t.failures {
				h.Failures[k] += v
			}
		}
		if t.restarts > 0 {
			h.Restarted = append(h.Restarted, name)
		}
	}
	return h
}

// Targets returns every target's status, sorted by name.
func (l *Ledger) Targets(now time.Time) []TargetStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]TargetStatus, 0, len(l.names))
	for _, name := range l.names {
		t := l.targets[name]
		role, eng := t.info.Role, t.info.Engine
		if role == engine.RoleUnknown {
			role = t.role
		}
		if eng == engine.EngineAuto {
			eng = t.engine
		}
		st := TargetStatus{
			Name: name, URL: scrape.Redact(t.info.URL), Role: string(role), Engine: string(eng), Model: t.model,
			Up: t.up, LastError: t.lastErr, LastScrape: t.lastAttempt, LastSuccess: t.lastSuccess,
			ScrapeDuration: t.lastDuration.Seconds(), ScrapeBytes: t.lastBytes,
			ScrapedBytes: t.bytesTotal, ScrapedSamples: t.samplesTotal,
			CounterResets: t.resets, Notes: append([]string(nil), t.notes...), SchedulerMode: t.schedulerMode,
			Fresh: l.unavailable(t, now) == "",
		}
		if len(t.failures) > 0 {
			st.Failures = make(map[scrape.Reason]uint64, len(t.failures))
			for k, v := range t.failures {
				st.Failures[k] = v
			}
		}
		for m := 0; m < engine.NumCounters; m++ {
			if t.hasTotal[m] && finite(t.totals[m]) {
				if st.Totals == nil {
					st.Totals = map[string]float64{}
				}
				st.Totals[engine.Metric(m).String()] = t.totals[m]
			}
		}
		if t.n > 0 && st.Fresh {
			s := t.at(0)
			for i, ok := range s.hasGauge {
				if ok && finite(s.gauges[i]) {
					if st.Gauges == nil {
						st.Gauges = map[string]float64{}
					}
					st.Gauges[engine.GaugeAt(i).String()] = s.gauges[i]
				}
			}
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// FailureReasons lists every failure class seen so far (for stable export).
func (l *Ledger) FailureReasons() []scrape.Reason {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[scrape.Reason]bool{}
	for _, t := range l.targets {
		for r := range t.failures {
			seen[r] = true
		}
	}
	out := make([]scrape.Reason, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// TargetMeta is what a table of instances needs of a target beside its
// point, without the cost of a whole TargetStatus.
type TargetMeta struct {
	// ModelLabel is the target's configured "model" label; Model is the
	// model name its exposition carries (either may be empty).
	ModelLabel string
	Model      string
	LastError  string
	// Pool is the target's pool by PoolName ("" when not known),
	// PoolLabelled whether a label named it, and Engine the engine kind
	// the target is read as.
	Pool         string
	PoolLabelled bool
	Engine       string
	// Router: the target is a request router, which joins the pool of its
	// model but is not one of its engines.
	Router bool
}

// ShownModel is the model a table names the target by: its configured
// label, else the one its exposition carries.
func (m TargetMeta) ShownModel() string {
	if m.ModelLabel != "" {
		return m.ModelLabel
	}
	return m.Model
}

// Meta returns every target's TargetMeta by name.
func (l *Ledger) Meta() map[string]TargetMeta {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.metaLocked()
}

// metaLocked is Meta under the ledger's lock.
func (l *Ledger) metaLocked() map[string]TargetMeta {
	out := make(map[string]TargetMeta, len(l.targets))
	for name, t := range l.targets {
		out[name] = t.meta()
	}
	return out
}

// meta is the target's TargetMeta.
func (t *target) meta() TargetMeta {
	eng := t.info.Engine
	if eng == engine.EngineAuto {
		eng = t.engine
	}
	m := TargetMeta{ModelLabel: t.info.Labels["model"], Model: t.model, LastError: t.lastErr, Engine: string(eng), Router: t.effectiveRole() == engine.Router}
	m.Pool, m.PoolLabelled = PoolName(t.info.Labels, t.model)
	return m
}
