// Package otlp receives OpenTelemetry traces: OTLP over gRPC and over
// HTTP (protobuf or JSON, POST /v1/traces) on one port, decoded with the
// OpenTelemetry Collector's pdata codecs, bounded in bytes and spans, and
// optionally forwarded unchanged to another OTLP/HTTP endpoint.
//
// Both protocols share one net/http server: unencrypted HTTP/2 (prior
// knowledge, as gRPC clients speak it) and HTTP/1.1 are both enabled, and
// requests whose Content-Type is application/grpc go to grpc-go's
// Server.ServeHTTP. One server means one set of timeouts and limits and no
// sniffing of the first bytes of a connection; grpc-go's ServeHTTP is
// slower than its own transport, which does not matter at the rates of
// traces (thousands of spans per second, batched).
//
// Errors follow the OTLP specification
// (https://opentelemetry.io/docs/specs/otlp/#failures): a payload that
// cannot be decoded is HTTP 400 / gRPC INVALID_ARGUMENT; one larger than
// the whole budget is HTTP 413 / gRPC RESOURCE_EXHAUSTED without
// RetryInfo (not retryable: it will never fit); a payload that does not fit
// now, because others are being read, is HTTP 503 with Retry-After / gRPC
// UNAVAILABLE with RetryInfo. A rejected export changes nothing.
package otlp
