package reqtrace

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Probe is one four-timestamp exchange between the reference (disagg) clock
// and a worker: Originate and Destination on the reference clock, Receive
// and Transmit on the worker's clock.
type Probe struct {
	Server      string
	Originate   float64
	Receive     float64
	Transmit    float64
	Destination float64
}

// Offset is θ = worker clock − reference clock (NTP). The error of θ is at
// most ±Delay/2 as long as neither network leg is negative.
func (p Probe) Offset() float64 {
	return ((p.Receive - p.Originate) + (p.Transmit - p.Destination)) / 2
}

// Delay is δ = (D − O) − (T − R), the round trip minus the worker's time.
func (p Probe) Delay() float64 {
	return (p.Destination - p.Originate) - (p.Transmit - p.Receive)
}

func (p Probe) valid() error {
	for _, v := range []float64{p.Originate, p.Receive, p.Transmit, p.Destination} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			return errors.New("timestamp missing, ≤ 0 or not finite")
		}
	}
	if p.Destination < p.Originate {
		return errors.New("destination_ts before originate_ts")
	}
	if p.Transmit < p.Receive {
		return errors.New("transmit_ts before receive_ts")
	}
	if p.Delay() < 0 {
		return errors.New("negative delay")
	}
	if o, d := p.Offset(), p.Delay(); math.IsInf(o, 0) || math.IsNaN(o) || math.IsInf(d, 0) || math.IsNaN(d) {
		return errors.New("offset or delay overflows")
	}
	return nil
}

// ClockEstimate is the chosen offset of one worker.
type ClockEstimate struct {
	Server string  `json:"server"`
	Offset float64 `json:"offset_seconds"` // θ, subtract from worker times
	Delay  float64 `json:"delay_seconds"`  // δ of the chosen probe
	// Uncertainty is δ/2: the true offset lies within Offset ± Uncertainty.
	Uncertainty float64 `json:"uncertainty_seconds"`
	Probes      int     `json:"probes"`
	// Usable is false when every probe of the server was invalid; the
	// numbers are then meaningless and its times stay as recorded.
	Usable  bool `json:"usable"`
	Invalid int  `json:"invalid_probes"`
}

// ClockSync is the set of per-worker estimates; the zero value aligns
// nothing.
type ClockSync struct {
	Reference string          `json:"reference_clock,omitempty"`
	Estimates []ClockEstimate `json:"estimates"`
	byServer  map[string]ClockEstimate
}

// Lookup returns the estimate for a server, if any.
func (c *ClockSync) Lookup(server string) (ClockEstimate, bool) {
	if c == nil {
		return ClockEstimate{}, false
	}
	e, ok := c.byServer[server]
	return e, ok
}

// EstimateClocks picks, per server, the probe with the least delay: its
// offset has the tightest error bound, whatever the asymmetry of the rest.
// Invalid probes are counted and ignored; a server with only invalid probes
// gets no estimate (its times stay as recorded).
func EstimateClocks(probes []Probe) *ClockSync {
	best := map[string]ClockEstimate{}
	count := map[string][2]int{}
	for _, p := range probes {
		s := NormalizeServer(p.Server)
		c := count[s]
		if p.valid() != nil {
			c[1]++
			count[s] = c
			continue
		}
		c[0]++
		count[s] = c
		d := p.Delay()
		if e, ok := best[s]; !ok || d < e.Delay {
			best[s] = ClockEstimate{Server: s, Offset: p.Offset(), Delay: d, Uncertainty: d / 2}
		}
	}
	cs := &ClockSync{byServer: map[string]ClockEstimate{}}
	for s, c := range count {
		e, ok := best[s]
		if !ok {
			e = ClockEstimate{Server: s}
		}
		e.Usable = ok
		e.Probes, e.Invalid = c[0]+c[1], c[1]
		if ok {
			cs.byServer[s] = e
		}
		cs.Estimates = append(cs.Estimates, e)
	}
	sort.Slice(cs.Estimates, func(i, j int) bool { return cs.Estimates[i].Server < cs.Estimates[j].Server })
	return cs
}

// wireClockSync is ptdmon's clock-sync input (docs/trtllm.md#clock-sync-input): the wire
// formats of GET /steady_clock_offset and X-TRTLLM-Clock-Sync, wrapped with
// the originate/destination times taken on the reference clock.
type wireClockSync struct {
	ReferenceClock string `json:"reference_clock"`
	Probes         []struct {
		Server        string   `json:"server"`
		OriginateTS   *float64 `json:"originate_ts"`
		DestinationTS *float64 `json:"destination_ts"`
		Response      *struct {
			ReceiveTS  *float64 `json:"receive_ts"`
			TransmitTS *float64 `json:"transmit_ts"`
		} `json:"response"`
		Header string `json:"x_trtllm_clock_sync"`
	} `json:"probes"`
}

// ParseClockSync reads the clock-sync input. Structural errors (bad JSON, a
// probe without server or without R/T) fail the whole input, because a
// silently dropped probe would change which worker is aligned.
func ParseClockSync(b []byte) (*ClockSync, error) {
	var w wireClockSync
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("clock-sync: %w", err)
	}
	if w.Probes == nil {
		return nil, errors.New(`clock-sync: no "probes" array`)
	}
	probes := make([]Probe, 0, len(w.Probes))
	for i, wp := range w.Probes {
		if strings.TrimSpace(wp.Server) == "" {
			return nil, fmt.Errorf("clock-sync: probe %d: no server", i)
		}
		if wp.OriginateTS == nil || wp.DestinationTS == nil {
			return nil, fmt.Errorf("clock-sync: probe %d (%s): originate_ts and destination_ts are required", i, wp.Server)
		}
		p := Probe{Server: wp.Server, Originate: *wp.OriginateTS, Destination: *wp.DestinationTS}
		switch {
		case wp.Response != nil && wp.Response.ReceiveTS != nil && wp.Response.TransmitTS != nil:
			p.Receive, p.Transmit = *wp.Response.ReceiveTS, *wp.Response.TransmitTS
		case wp.Header != "":
			r, t, err := ParseClockSyncHeader(wp.Header)
			if err != nil {
				return nil, fmt.Errorf("clock-sync: probe %d (%s): %w", i, wp.Server, err)
			}
			p.Receive, p.Transmit = r, t
		default:
			return nil, fmt.Errorf("clock-sync: probe %d (%s): needs response.receive_ts/transmit_ts or x_trtllm_clock_sync", i, wp.Server)
		}
		probes = append(probes, p)
	}
	cs := EstimateClocks(probes)
	cs.Reference = w.ReferenceClock
	return cs, nil
}

// ParseClockSyncHeader parses "receive;ts=R, transmit;ts=T".
func ParseClockSyncHeader(h string) (receive, transmit float64, err error) {
	var haveR, haveT bool
	for _, entry := range strings.Split(h, ",") {
		name, param, ok := strings.Cut(strings.TrimSpace(entry), ";")
		if !ok {
			return 0, 0, fmt.Errorf("X-TRTLLM-Clock-Sync entry %q: no ;ts=", entry)
		}
		v, ok := strings.CutPrefix(strings.TrimSpace(param), "ts=")
		if !ok {
			return 0, 0, fmt.Errorf("X-TRTLLM-Clock-Sync entry %q: no ts=", entry)
		}
		f, perr := strconv.ParseFloat(v, 64)
		if perr != nil {
			return 0, 0, fmt.Errorf("X-TRTLLM-Clock-Sync entry %q: %w", entry, perr)
		}
		switch strings.TrimSpace(name) {
		case "receive":
			receive, haveR = f, true
		case "transmit":
			transmit, haveT = f, true
		}
	}
	if !haveR || !haveT {
		return 0, 0, fmt.Errorf("X-TRTLLM-Clock-Sync %q: needs receive and transmit", h)
	}
	return receive, transmit, nil
}
