package service

import (
	"net/http"
	"net/http/pprof"
)

// addPprof adds Go's profiling endpoints to routes (see docs/performance.md).
func addPprof(routes map[string]http.Handler) {
	routes["GET /debug/pprof/"] = http.HandlerFunc(pprof.Index)
	routes["GET /debug/pprof/cmdline"] = http.HandlerFunc(pprof.Cmdline)
	routes["GET /debug/pprof/profile"] = http.HandlerFunc(pprof.Profile)
	routes["GET /debug/pprof/symbol"] = http.HandlerFunc(pprof.Symbol)
	routes["GET /debug/pprof/trace"] = http.HandlerFunc(pprof.Trace)
}
