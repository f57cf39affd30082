package scrape

import "errors"

// Reason classifies a failed scrape: the reason label of
// ptd_scrape_failures_total and the key of a target's failure counts. Every
// stage of the read path (fetch, parse, engine adapter, ledger) reports its
// failures with one of these.
type Reason string

// Failure classes.
const (
	ReasonRefused  Reason = "refused"        // connection refused
	ReasonTimeout  Reason = "timeout"        // no complete answer within the scrape timeout
	ReasonHTTP     Reason = "http_status"    // an HTTP status other than 200
	ReasonTooLarge Reason = "body_too_large" // the body exceeds max_body_bytes
	// ReasonBudget: the bodies in flight across all targets would exceed
	// the global body budget.
	ReasonBudget       Reason = "body_budget"
	ReasonRead         Reason = "read"          // the connection broke while reading
	ReasonConnect      Reason = "connect"       // any other transport failure
	ReasonRedirect     Reason = "redirect"      // a redirect to another host or port, not followed
	ReasonRedirectLoop Reason = "redirect_loop" // redirects that revisit a URL or never end

	ReasonNotExposition Reason = "not_exposition"   // JSON, HTML or binary instead of metrics
	ReasonParse         Reason = "parse"            // a malformed exposition
	ReasonDuplicate     Reason = "duplicate_series" // one series twice with different values
	ReasonRole          Reason = "role"             // the instance's role cannot be told
	ReasonAdapter       Reason = "adapter"          // well-formed but not readable as an engine
	ReasonSeriesLimit   Reason = "series_limit"     // more series than the per-target limit
	ReasonIterStats     Reason = "iterstats_empty"  // TensorRT-LLM's iteration statistics were empty
	ReasonUnknown       Reason = "error"            // a failure no stage classified
)

// ReasonOf returns the class carried by err (an *Error anywhere in its
// chain), or ReasonUnknown.
func ReasonOf(err error) Reason {
	var se *Error
	if errors.As(err, &se) && se.Reason != "" {
		return se.Reason
	}
	return ReasonUnknown
}

// Error is a failed scrape with its class.
type Error struct {
	Reason Reason
	Err    error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }
