package otlp

import (
	"context"
	"errors"
	"io"
	"sync"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// wireBudget counts a gRPC request's body against the receiver's budget
// while grpc-go reads it: grpc-go assembles a whole message before the
// handler runs, so without it N clients could hold N messages of up to
// MaxBytes each before the budget sees one. Once the message is handed
// over, the handler swaps the bytes counted on the wire for the message's
// own size (it may have been compressed), and the rest is given back when
// the request ends.
type wireBudget struct {
	body io.ReadCloser
	r    *Receiver

	mu   sync.Mutex
	took int64
	done bool // the handler has taken the message's bytes itself
}

type wireBudgetKey struct{}

func (wb *wireBudget) Read(p []byte) (int, error) {
	n, err := wb.body.Read(p)
	if n == 0 {
		return n, err
	}
	wb.mu.Lock()
	defer wb.mu.Unlock()
	if wb.done {
		return n, err
	}
	if wb.took+int64(n) > wb.r.cfg.MaxBytes {
		// This request alone will never fit: it is not counted, and
		// grpc-go refuses it as larger than MaxRecvMsgSize
		// (RESOURCE_EXHAUSTED, not to be retried).
		return n, err
	}
	if !wb.r.budget.take(int64(n)) {
		wb.r.refused.Add(1)
		// grpc-go ends the request UNAVAILABLE with this text, which
		// OTLP exporters retry (the RetryInfo of a refusal after the
		// read cannot be attached to a read error).
		return 0, errGRPCOverBudget
	}
	wb.took += int64(n)
	return n, err
}

func (wb *wireBudget) Close() error { return wb.body.Close() }

// handOver gives back what the wire reading took, once: the handler takes
// the message's bytes instead.
func (wb *wireBudget) handOver() {
	wb.mu.Lock()
	defer wb.mu.Unlock()
	wb.r.budget.give(wb.took)
	wb.took, wb.done = 0, true
}

func wireBudgetFrom(ctx context.Context) *wireBudget {
	wb, _ := ctx.Value(wireBudgetKey{}).(*wireBudget)
	return wb
}

var errGRPCOverBudget = errors.New("over the receiver's byte budget; retry later")

func (r *Receiver) overBudgetStatus() *status.Status {
	const msg = "over the receiver's byte budget; retry later"
	st, err := status.New(codes.Unavailable, msg).
		WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(r.cfg.RetryAfter)})
	if err != nil {
		return status.New(codes.Unavailable, msg)
	}
	return st
}
