package otlp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"
)

// forwarder sends accepted exports, as OTLP/HTTP protobuf, to another
// endpoint. It never holds a receiver up: exports that do not fit its
// queue (bounded in bytes) are dropped and counted.
type forwarder struct {
	url    string
	client *http.Client
	log    *slog.Logger
	queue  chan []byte
	budget budget

	sent, dropped, failed atomic.Int64
}

func newForwarder(url string, maxBytes int64, log *slog.Logger) *forwarder {
	return &forwarder{url: url, client: &http.Client{Timeout: 10 * time.Second}, log: log,
		queue: make(chan []byte, 256), budget: budget{max: maxBytes}}
}

func (f *forwarder) send(body []byte) {
	if !f.budget.take(int64(len(body))) {
		f.dropped.Add(1)
		return
	}
	select {
	case f.queue <- body:
	default:
		f.budget.give(int64(len(body)))
		f.dropped.Add(1)
	}
}

func (f *forwarder) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case body := <-f.queue:
			if err := f.post(ctx, body); err != nil {
				f.failed.Add(1)
				f.log.Warn("forwarding traces failed", "url", f.url, "err", err)
			} else {
				f.sent.Add(1)
			}
			f.budget.give(int64(len(body)))
		}
	}
}

func (f *forwarder) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("forward request: %w", err)
	}
	req.Header.Set("Content-Type", ctProtobuf)
	resp, err := f.client.Do(req)
	if err != nil {
		return fmt.Errorf("forward: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("forward: %s", resp.Status)
	}
	return nil
}
