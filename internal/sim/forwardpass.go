package sim

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/vmihailenco/msgpack/v5"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// Forward-pass metrics as vLLM (PR #52061, vllm/v1/metrics/forward_pass_metrics.py)
// and SGLang (python/sglang/srt/observability/forward_pass_metrics.py)
// publish them: one ZeroMQ PUB socket per engine (DP rank), multipart
// messages of an empty topic, an 8-byte big-endian sequence number and a
// msgpack map; an idle heartbeat each second (docs/engines.md#forward-pass-metrics).
// The engines send one message per model execution; the simulator sends
// the engine's busy time since its last message every tick, as if the
// passes of that tick were one: their wall times add up the same.

// fpmHeartbeat is the engines' idle heartbeat interval.
const fpmHeartbeat = time.Second

// fpmPublisher is one engine's socket and what it has published.
type fpmPublisher struct {
	in       *instance
	eng      *engine
	sock     zmq4.Socket
	endpoint string
	proc     int   // instance.restarts the sequence belongs to
	seq      int64 // next sequence number
	sent     int64 // the engine's busy ns already published
	last     time.Time
}

// fpmMessage is the wire payload (vLLM's ForwardPassMetrics, version 1;
// SGLang's carries the same fields less version, counter_id and timing_scope).
type fpmMessage struct {
	Version     int            `msgpack:"version"`
	WorkerID    string         `msgpack:"worker_id"`
	DPRank      int            `msgpack:"dp_rank"`
	CounterID   int64          `msgpack:"counter_id"`
	TimingScope string         `msgpack:"timing_scope"`
	WallTime    float64        `msgpack:"wall_time"`
	Scheduled   map[string]any `msgpack:"scheduled_requests"`
	Queued      map[string]any `msgpack:"queued_requests"`
}

// startForwardPass binds a publisher per engine of every vLLM and SGLang
// instance, on listenHost.
func (c *Cluster) startForwardPass(listenHost string) error {
	for _, in := range c.model.instances {
		e := ptd.Engine(in.grp.spec.Engine)
		if e != ptd.VLLM && e != ptd.SGLang {
			continue
		}
		for _, eng := range in.engines {
			sock := zmq4.NewPub(context.Background())
			if err := sock.Listen("tcp://" + listenHost + ":0"); err != nil {
				sock.Close()
				return fmt.Errorf("forward-pass metrics of %s: %w", in.name, err)
			}
			c.fpm = append(c.fpm, &fpmPublisher{in: in, eng: eng, sock: sock, endpoint: "tcp://" + sock.Addr().String()})
		}
	}
	return nil
}

// forwardPassMessages builds each up engine's message of this tick: its
// busy time since the last one, or a heartbeat once a second. The caller
// holds c.mu; sending is left to sendForwardPass, outside it.
func (c *Cluster) forwardPassMessages(wall time.Time) []fpmOut {
	var out []fpmOut
	m := c.model
	for _, p := range c.fpm {
		in := p.in
		if in.down {
			continue
		}
		if p.proc != in.restarts || p.seq == 0 {
			// A new process: its sequence starts at 0, its busy time at
			// its start.
			p.proc, p.seq, p.sent = in.restarts, 0, p.eng.work.at(in.upAt[len(in.upAt)-1])
		}
		busy := p.eng.work.at(m.now)
		if busy == p.sent && wall.Sub(p.last) < fpmHeartbeat {
			continue
		}
		msg := fpmMessage{Version: 1, WorkerID: in.name, DPRank: p.eng.idx, CounterID: p.seq,
			TimingScope: "execute_model_cuda", WallTime: float64(busy-p.sent) / 1e9}
		if busy > p.sent {
			msg.Scheduled = map[string]any{"num_prefill_requests": len(p.eng.batch), "num_decode_requests": len(p.eng.running)}
		}
		out = append(out, fpmOut{p, p.seq, msg})
		p.seq++
		p.sent, p.last = busy, wall
	}
	return out
}

type fpmOut struct {
	p   *fpmPublisher
	seq int64
	msg fpmMessage
}

// sendForwardPass sends the tick's messages.
func (c *Cluster) sendForwardPass(msgs []fpmOut) {
	for _, o := range msgs {
		payload, err := msgpack.Marshal(&o.msg)
		if err != nil {
			c.log.Error("sim forward-pass metrics", "err", err)
			return
		}
		var seq [8]byte
		binary.BigEndian.PutUint64(seq[:], uint64(o.seq))
		if err := o.p.sock.SendMulti(zmq4.NewMsgFrom([]byte{}, seq[:], payload)); err != nil {
			c.log.Debug("sim forward-pass metrics", "instance", o.p.in.name, "err", err)
		}
	}
}

// ForwardPassMetrics lists the named instance's forward-pass endpoints, one
// per engine; none unless the cluster publishes them.
func (c *Cluster) ForwardPassMetrics(name string) []string {
	var out []string
	for _, p := range c.fpm {
		if p.in.name == name {
			out = append(out, p.endpoint)
		}
	}
	return out
}
