package fpm

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

var t0 = time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)

// event is one message of endpoint ep, its sequence number and wall time,
// arrived at t0+at seconds.
type event struct {
	ep   int
	seq  int64
	wall float64
	at   float64
}

func TestFeed(t *testing.T) {
	const quarantine = 10 * time.Second
	f := func(name string, endpoints int, events []event, at float64, want []float64, why string) {
		t.Helper()
		eps := []string{"tcp://10.0.0.1:20380", "tcp://10.0.0.1:20381"}[:endpoints]
		feed := NewFeed(eps, quarantine)
		for _, e := range events {
			feed.Receive(e.ep, e.seq, Message{WallTime: e.wall}, t0.Add(time.Duration(e.at*float64(time.Second))))
		}
		var o engine.Observation
		feed.AddTo(&o, t0.Add(time.Duration(at*float64(time.Second))))
		if len(o.Counters) != endpoints {
			t.Fatalf("%s: %d counters, want %d", name, len(o.Counters), endpoints)
		}
		for i, c := range o.Counters {
			if c.Metric != engine.ForwardPassSeconds {
				t.Errorf("%s: counter %d is %s", name, i, c.Metric)
			}
			switch {
			case why != "" && !math.IsNaN(c.Value):
				t.Errorf("%s: endpoint %d reads %g, want unknown", name, i, c.Value)
			case why == "" && math.Abs(c.Value-want[i]) > 1e-12:
				t.Errorf("%s: endpoint %d reads %g, want %g", name, i, c.Value, want[i])
			}
		}
		if endpoints == 2 && o.Counters[0].Series == o.Counters[1].Series {
			t.Errorf("%s: both endpoints are one series", name)
		}
		note := strings.Join(o.Notes, "; ")
		if (why == "") != (note == "") || !strings.Contains(note, why) {
			t.Errorf("%s: notes %q, want one saying %q", name, note, why)
		}
	}
	f("passes and heartbeats add up", 1, []event{{0, 0, 0.25, 0}, {0, 1, 0.5, 0.5}, {0, 2, 0, 1.5}}, 2, []float64{0.75}, "")
	f("each rank its own series", 2, []event{{0, 0, 0.1, 0}, {1, 0, 0.2, 0}, {1, 1, 0.3, 1}}, 2, []float64{0.1, 0.5}, "")
	f("nothing heard yet", 1, nil, 2, nil, "no message from tcp://10.0.0.1:20380 yet")
	f("one rank not heard: the instance unknown", 2, []event{{0, 0, 0.1, 0}}, 2, nil, "no message from tcp://10.0.0.1:20381")
	f("silent past the heartbeat", 1, []event{{0, 0, 0.1, 0}}, 4, nil, "silent for 4 s")
	lost := []event{{0, 0, 0.1, 0}, {0, 3, 0.1, 1}}
	for i := range 10 { // heartbeats
		lost = append(lost, event{0, int64(4 + i), 0, float64(2 + i)})
	}
	f("messages lost: unknown for the quarantine", 1, lost, 10.5, nil, "2 messages lost 10 s ago")
	f("and known after it", 1, lost, 11.5, []float64{0.2}, "")
	f("publisher restarted", 1, []event{{0, 7, 0.1, 0}, {0, 0, 0.1, 1}}, 3, nil, "its publisher restarted")
	f("back after silence", 1, []event{{0, 0, 0.1, 0}, {0, 1, 0.1, 5}}, 6, nil, "silent for 5 s")
}

func TestMalformedIsALoss(t *testing.T) {
	feed := NewFeed([]string{"tcp://h:1"}, 10*time.Second)
	feed.Receive(0, 0, Message{WallTime: 0.1}, t0)
	feed.Malformed(0, ErrVersion, t0.Add(time.Second))
	var o engine.Observation
	feed.AddTo(&o, t0.Add(2*time.Second))
	if !math.IsNaN(o.Counters[0].Value) || len(o.Notes) != 1 || !strings.Contains(o.Notes[0], ErrVersion.Error()) {
		t.Errorf("after a malformed message: %+v, notes %q", o.Counters, o.Notes)
	}
	if s := feed.Stats()[0]; s.Lost != 1 || s.Messages != 1 {
		t.Errorf("stats %+v", s)
	}
}
