package iterstats

import (
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// The iteration statistics are a TensorRT-LLM body format of their own:
// the Reader is registered as its BodyReader, so a target configured with
// iteration_stats is read through engine.NewBodyReader like any other.
func init() {
	engine.RegisterFormat(engine.FormatIterationStats, engine.TensorRTLLM, func(c engine.BodyReaderConfig) engine.BodyReader {
		return source{NewReader(c.Role, Options{Name: c.Name, Logger: c.Logger})}
	})
}

// source adds the poll's iteration latency and loop time to the Reader's
// observation; the records' own time becomes the sample time.
type source struct{ *Reader }

func (s source) Read(body []byte, _ string, at time.Time) (*engine.Observation, time.Time, error) {
	o, t, err := s.Reader.Read(body, at)
	if err != nil {
		return nil, t, err
	}
	it := s.LastIteration()
	if it.N > 0 {
		i := engine.IterationLatency.GaugeIndex()
		o.Gauges[i], o.HasGauges[i] = it.Mean.Seconds(), true
		o.SchedulerMode = it.Mode
	}
	if loop, _, ok := it.Loop(); ok {
		i := engine.IterationLoop.GaugeIndex()
		o.Gauges[i], o.HasGauges[i] = loop.Seconds(), true
	}
	return o, t, nil
}
