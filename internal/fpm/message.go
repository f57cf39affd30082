// Package fpm reads the forward-pass metrics that vLLM and SGLang publish
// over ZeroMQ: one msgpack message per model execution, with the
// execution's wall time, and an idle heartbeat each second
// (docs/engines.md#forward-pass-metrics). Their wall times added up are the
// engine's busy seconds, the strongest busy-time signal there is.
package fpm

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Version is the schema version vLLM's messages carry; SGLang's carry none
// (the same fields, read as version 0).
const Version = 1

// Message is one forward pass as the engines encode it: a msgspec Struct,
// that is a msgpack map keyed by field name. Fields this reader does not
// use are skipped.
type Message struct {
	Version  int    `msgpack:"version"`
	WorkerID string `msgpack:"worker_id"`
	DPRank   int    `msgpack:"dp_rank"`
	// CounterID is vLLM's sequence number, also sent as the message's
	// second frame.
	CounterID int64 `msgpack:"counter_id"`
	// WallTime is the execution's seconds (vLLM: the CUDA timeline of
	// execute_model); 0 in a heartbeat.
	WallTime  float64  `msgpack:"wall_time"`
	Scheduled Requests `msgpack:"scheduled_requests"`
	Queued    Requests `msgpack:"queued_requests"`
}

// Requests are the requests of one pass, or those waiting after it.
type Requests struct {
	PrefillRequests   int64   `msgpack:"num_prefill_requests"`
	PrefillTokens     int64   `msgpack:"sum_prefill_tokens"`
	DecodeRequests    int64   `msgpack:"num_decode_requests"`
	DecodeKVTokens    int64   `msgpack:"sum_decode_kv_tokens"`
	PrefillKVTokens   int64   `msgpack:"sum_prefill_kv_tokens"`
	PrefillLengthVar  float64 `msgpack:"var_prefill_length"`
	DecodeKVTokensVar float64 `msgpack:"var_decode_kv_tokens"`
}

// ErrVersion is a message of a schema version this reader does not know.
var ErrVersion = errors.New("unsupported forward-pass metrics version")

// Decode reads one message payload (the multipart message's last frame).
func Decode(payload []byte) (Message, error) {
	var m Message
	if err := msgpack.Unmarshal(payload, &m); err != nil {
		return Message{}, fmt.Errorf("forward-pass metrics payload: %w", err)
	}
	if m.Version != 0 && m.Version != Version {
		return Message{}, fmt.Errorf("%w %d (known: %d)", ErrVersion, m.Version, Version)
	}
	if m.WallTime < 0 || m.WallTime != m.WallTime || m.WallTime > maxWallTime {
		return Message{}, fmt.Errorf("forward-pass metrics: wall_time %g s out of range", m.WallTime)
	}
	return m, nil
}

// maxWallTime bounds one pass: longer is a corrupt message, not a pass.
const maxWallTime = 3600
