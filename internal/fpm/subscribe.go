package fpm

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-zeromq/zmq4"
)

// redial is the pause before dialling an endpoint again.
const redial = time.Second

// Run subscribes to every endpoint of f until ctx ends, one goroutine each,
// and returns when they have stopped.
func Run(ctx context.Context, f *Feed, endpoints []string, log *slog.Logger) {
	done := make(chan struct{}, len(endpoints))
	for i, ep := range endpoints {
		go func() {
			defer func() { done <- struct{}{} }()
			subscribe(ctx, f, i, ep, log)
		}()
	}
	for range endpoints {
		<-done
	}
}

// subscribe reads endpoint i until ctx ends. A connection that carries no
// message for SilentAfter (the engines send a heartbeat each second) is
// dropped and dialled again: the publisher may have restarted elsewhere.
func subscribe(ctx context.Context, f *Feed, i int, ep string, log *slog.Logger) {
	for ctx.Err() == nil {
		err := session(ctx, f, i, ep)
		if ctx.Err() != nil {
			return
		}
		f.Unreachable(i, err)
		log.Debug("forward-pass metrics", "endpoint", ep, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(redial):
		}
	}
}

// errSilent ends a session whose publisher sent nothing for SilentAfter.
var errSilent = errors.New("no message (not even a heartbeat)")

// session is one connection to ep: it returns why it ended.
func session(ctx context.Context, f *Feed, i int, ep string) error {
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sub := zmq4.NewSub(sctx, zmq4.WithDialerMaxRetries(0), zmq4.WithDialerTimeout(2*time.Second))
	defer sub.Close()
	if err := sub.Dial(ep); err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	if err := sub.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}
	heard := make(chan struct{}, 1)
	go func() {
		t := time.NewTimer(SilentAfter)
		defer t.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-heard:
				t.Reset(SilentAfter)
			case <-t.C:
				cancel(errSilent)
				return
			}
		}
	}()
	for {
		msg, err := sub.Recv()
		if err != nil {
			if c := context.Cause(sctx); c != nil && ctx.Err() == nil {
				return c
			}
			return fmt.Errorf("receive: %w", err)
		}
		select {
		case heard <- struct{}{}:
		default:
		}
		seq, m, err := parseFrames(msg.Frames)
		if err != nil {
			// One bad message is not the stream's end: say so and go on.
			f.Malformed(i, err, time.Now())
			continue
		}
		f.Receive(i, seq, m, time.Now())
	}
}

// parseFrames reads a multipart message: topic, 8-byte big-endian
// sequence number, msgpack payload (vLLM and SGLang alike).
func parseFrames(frames [][]byte) (int64, Message, error) {
	if len(frames) != 3 || len(frames[1]) != 8 {
		return 0, Message{}, fmt.Errorf("forward-pass metrics: want 3 frames (topic, 8-byte sequence, payload), got %d", len(frames))
	}
	m, err := Decode(frames[2])
	if err != nil {
		return 0, Message{}, err
	}
	return int64(binary.BigEndian.Uint64(frames[1])), m, nil
}
