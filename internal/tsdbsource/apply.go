package tsdbsource

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/prometheus/common/model"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/scheduler"
	"github.com/ptdmon/ptdmon/internal/scrape"
)

// pending gathers one step's samples of one target, by sample time.
type pending struct {
	labels model.Metric
	up     map[model.Time]float64
	dur    map[model.Time]float64
	body   map[model.Time]*bytes.Buffer
	// complete is the newest sample time every group that has this target
	// has reached: later samples may still be missing from a group that was
	// queried before the scrape was written.
	complete model.Time
}

// dropped are the labels the TSDB added; what remains is the engine's own
// series, as the adapters know it from a scrape.
var dropped = map[model.LabelName]bool{
	model.MetricNameLabel: true, model.JobLabel: true, model.InstanceLabel: true,
	LabelTarget: true, LabelRole: true, LabelEngine: true,
}

func (s *Source) apply(at time.Time, health model.Matrix, metrics []model.Matrix) {
	byTarget := map[string]*pending{}
	otherShard := map[string]bool{}
	get := func(m model.Metric) *pending {
		name := string(m[LabelTarget])
		p, ok := byTarget[name]
		if !ok {
			if otherShard[name] {
				return nil
			}
			if !s.opts.Shard.Keep(string(m[model.InstanceLabel])) {
				otherShard[name] = true
				return nil
			}
			p = &pending{labels: m, up: map[model.Time]float64{}, dur: map[model.Time]float64{},
				body: map[model.Time]*bytes.Buffer{}, complete: math.MaxInt64}
			byTarget[name] = p
		}
		return p
	}
	for _, ss := range health {
		p := get(ss.Metric)
		if p == nil {
			continue
		}
		into := p.up
		if ss.Metric[model.MetricNameLabel] == "scrape_duration_seconds" {
			into = p.dur
		}
		for _, v := range ss.Values {
			into[v.Timestamp] = float64(v.Value)
		}
	}
	var line, num []byte
	for _, m := range metrics {
		newest := map[*pending]model.Time{}
		for _, ss := range m {
			p := get(ss.Metric)
			if p == nil || len(ss.Values) == 0 {
				continue
			}
			line = seriesText(line[:0], ss.Metric)
			for _, v := range ss.Values {
				b := p.body[v.Timestamp]
				if b == nil {
					b = &bytes.Buffer{}
					p.body[v.Timestamp] = b
				}
				b.Write(line)
				b.WriteByte(' ')
				num = strconv.AppendFloat(num[:0], float64(v.Value), 'g', -1, 64)
				b.Write(num)
				b.WriteByte('\n')
			}
			if t := ss.Values[len(ss.Values)-1].Timestamp; t > newest[p] {
				newest[p] = t
			}
		}
		for p, t := range newest {
			p.complete = min(p.complete, t)
		}
	}
	s.discover(at, byTarget)
	for _, name := range slices.Sorted(maps.Keys(byTarget)) {
		if t, ok := s.targets[name]; ok {
			s.feed(t, byTarget[name])
		}
	}
}

// discover adds the targets seen in this step and forgets those the TSDB
// has not mentioned for Forget.
func (s *Source) discover(at time.Time, seen map[string]*pending) {
	changed := false
	for name, p := range seen {
		role, _ := engine.ParseRole(string(p.labels[LabelRole]))
		eng, _ := engine.ParseEngine(string(p.labels[LabelEngine]))
		info := engine.Target{Name: name, URL: string(p.labels[model.InstanceLabel]), Role: role, Engine: eng}
		if pool := string(p.labels[ledger.LabelPool]); pool != "" {
			info.Labels = map[string]string{ledger.LabelPool: pool}
		}
		t, ok := s.targets[name]
		if !ok || !t.info.Equal(info) {
			nt := &target{info: info, reader: engine.NewReader(eng, role, s.opts.KVSource)}
			if ok {
				// Moved (a new address) or relabelled: the samples already
				// given to the ledger must not be given again.
				nt.fed = t.fed
			}
			t = nt
			s.targets[name] = t
			changed = true
		}
		t.lastSeen = at
	}
	for name, t := range s.targets {
		if at.Sub(t.lastSeen) > s.opts.Forget {
			delete(s.targets, name)
			changed = true
		}
	}
	if !changed {
		return
	}
	infos := make([]engine.Target, 0, len(s.targets))
	for _, t := range s.targets {
		infos = append(infos, t.info)
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	s.ledger.SetTargets(infos)
	s.opts.Logger.Info("TSDB targets", "url", s.opts.URL, "targets", len(infos))
}

// feed gives the ledger every sample time newer than the last one fed, in
// order: a failed scrape (up == 0) as a failure, a successful one as an
// exposition read by the target's engine adapter.
func (s *Source) feed(t *target, p *pending) {
	times := map[model.Time]bool{}
	for ts := range p.up {
		times[ts] = true
	}
	for ts := range p.body {
		times[ts] = true
	}
	for _, ts := range slices.Sorted(maps.Keys(times)) {
		if ts <= t.fed {
			continue
		}
		sc := ledger.Scrape{Target: t.info.Name, Time: ts.Time(), Duration: seconds(p.dur[ts])}
		if up, ok := p.up[ts]; ok && up == 0 {
			sc.Err = fmt.Errorf("the TSDB's scrape of %s failed (up == 0)", t.info.URL)
			sc.Reason = scrape.ReasonTargetDown
			s.ledger.Record(sc)
			t.fed = ts
			continue
		}
		if ts > p.complete {
			break // the rest next step, once every group has it
		}
		var body []byte
		if b := p.body[ts]; b != nil {
			body = b.Bytes()
			sc.Bytes = len(body)
		}
		obs, err := t.reader.Read(body, textFormat)
		if err != nil {
			sc.Err, sc.Reason = err, scheduler.ReadFailureReason(err)
		} else {
			sc.Obs = obs
		}
		s.ledger.Record(sc)
		t.fed = ts
	}
}

func seconds(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }

// seriesText writes the series in the text exposition format, without the
// labels the TSDB added.
func seriesText(b []byte, m model.Metric) []byte {
	b = append(b, m[model.MetricNameLabel]...)
	names := make([]string, 0, len(m))
	for k := range m {
		if !dropped[k] {
			names = append(names, string(k))
		}
	}
	if len(names) == 0 {
		return b
	}
	sort.Strings(names)
	b = append(b, '{')
	for i, k := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, k...)
		b = append(b, '=', '"')
		for _, c := range []byte(m[model.LabelName(k)]) {
			switch c {
			case '\\':
				b = append(b, '\\', '\\')
			case '"':
				b = append(b, '\\', '"')
			case '\n':
				b = append(b, '\\', 'n')
			default:
				b = append(b, c)
			}
		}
		b = append(b, '"')
	}
	return append(b, '}')
}
