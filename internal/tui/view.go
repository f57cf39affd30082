// Package tui renders ptdmon's state as text for a terminal: the three stage
// rates with a sparkline of their recent history, the verdict, the hand-off
// queues and the instances. It reads the JSON API, like any other client.
package tui

import "time"

// Snapshot is the part of /api/v1/snapshot the terminal view shows.
type Snapshot struct {
	Time      time.Time `json:"time"`
	Window    float64   `json:"window_seconds"`
	KVRequest struct {
		Bytes  float64 `json:"bytes"`
		Source string  `json:"source"`
	} `json:"kv_request_bytes"`
	Point   *Point   `json:"point"`
	Verdict *Verdict `json:"verdict"`
	Targets []Target `json:"targets"`
}

// Point is one tick.
type Point struct {
	Time      time.Time  `json:"time"`
	Prefill   Stage      `json:"prefill"`
	KV        Stage      `json:"kv"`
	Decode    Stage      `json:"decode"`
	Instances []Instance `json:"instances"`
	// Verdict is the verdict stage at this point, from the series'
	// verdict timeline ("" when not known).
	Verdict string `json:"-"`
}

// Stage holds one stage's values; nil means absent, Absent says why.
type Stage struct {
	Instant *float64            `json:"requests_per_second"`
	Window  *float64            `json:"requests_per_second_window"`
	Bytes   *float64            `json:"bytes_per_second"`
	BytesW  *float64            `json:"bytes_per_second_window"`
	Running *float64            `json:"running"`
	Waiting *float64            `json:"waiting"`
	Queues  map[string]*float64 `json:"queues"`
	KVUsage *float64            `json:"kv_cache_usage_ratio"`
	N       int                 `json:"instances"`
	Up      int                 `json:"instances_up"`
	Missing []string            `json:"missing"`
	Absent  map[string]string   `json:"absent"`
}

// Instance is one target at the tick.
type Instance struct {
	Target  string            `json:"target"`
	Role    string            `json:"role"`
	Engine  string            `json:"engine"`
	Up      bool              `json:"up"`
	Instant *float64          `json:"requests_per_second"`
	Window  *float64          `json:"requests_per_second_window"`
	KVBytes *float64          `json:"kv_bytes_per_second_window"`
	Running *float64          `json:"running"`
	Waiting *float64          `json:"waiting"`
	Absent  map[string]string `json:"absent"`
}

// Verdict is the bottleneck verdict.
type Verdict struct {
	Stage    string   `json:"stage"`
	Headline string   `json:"headline"`
	Evidence []string `json:"evidence"`
}

// Target is a target's scrape health.
type Target struct {
	Name      string `json:"name"`
	Up        bool   `json:"up"`
	LastError string `json:"last_error"`
}

// Series is the part of /api/v1/series used for the sparklines and the
// verdict timeline.
type Series struct {
	Points   []Point       `json:"points"`
	Verdicts []VerdictSpan `json:"verdicts"`
}
