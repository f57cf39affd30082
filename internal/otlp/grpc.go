package otlp

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // OTLP exporters may compress with gzip
	"google.golang.org/grpc/status"
)

// The OTLP trace service (opentelemetry-proto,
// opentelemetry/proto/collector/trace/v1/trace_service.proto).
const traceService = "opentelemetry.proto.collector.trace.v1.TraceService"

// newGRPCServer serves the trace service with the request's bytes handed
// over raw: pdata decodes them (so a bad payload is INVALID_ARGUMENT, not
// grpc-go's INTERNAL), the budget counts them exactly, and the forwarder
// sends them on unchanged.
func newGRPCServer(r *Receiver) *grpc.Server {
	s := grpc.NewServer(
		grpc.ForceServerCodec(rawCodec{}),
		grpc.MaxRecvMsgSize(int(r.cfg.MaxBytes)),
	)
	s.RegisterService(&grpc.ServiceDesc{
		ServiceName: traceService,
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "Export",
			Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				var raw []byte
				if err := dec(&raw); err != nil {
					return nil, err
				}
				if wb := wireBudgetFrom(ctx); wb != nil {
					wb.handOver()
				}
				return r.exportGRPC(raw)
			},
		}},
		Metadata: "opentelemetry/proto/collector/trace/v1/trace_service.proto",
	}, r)
	return s
}

func (r *Receiver) exportGRPC(raw []byte) ([]byte, error) {
	n := int64(len(raw))
	if !r.budget.take(n) {
		r.refused.Add(1)
		return nil, r.overBudgetStatus().Err()
	}
	defer r.budget.give(n)
	decode := func(e ptraceotlp.ExportRequest, b []byte) error { return e.UnmarshalProto(b) }
	switch out, err := r.accept(raw, decode, true); out {
	case invalid:
		return nil, status.Error(codes.InvalidArgument, err.Error())
	case tooLarge:
		// No RetryInfo: the same export will never fit.
		return nil, status.Error(codes.ResourceExhausted, err.Error())
	}
	return ptraceotlp.NewExportResponse().MarshalProto()
}

// rawCodec hands messages over as bytes, both ways.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, fmt.Errorf("raw codec: cannot marshal %T", v)
	}
	return b, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	p, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("raw codec: cannot unmarshal into %T", v)
	}
	// grpc-go may reuse data once this returns.
	*p = append([]byte(nil), data...)
	return nil
}
