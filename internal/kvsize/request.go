package kvsize

// Request is B_request as ptdmon uses it, with where it came from: the one
// type of it from the flags to the ledger (KV req/s divides by it) and the
// JSON API, which writes it as is.
type Request struct {
	Bytes  int64   `json:"bytes,omitempty"`
	Source string  `json:"source"`           // "flag", "config", "model-config", "simulator" or "unset"
	Detail *Result `json:"detail,omitempty"` // the computation, when Source is "model-config"
}

// Sources of B_request.
const (
	SourceFlag        = "flag"
	SourceConfig      = "config"
	SourceModelConfig = "model-config"
	SourceSimulator   = "simulator"
	SourceUnset       = "unset"
)

// Resolve settles B_request: bytes given directly (source says by whom) win;
// else it is computed from the model's config.json at modelConfig; else it
// is unset, and KV req/s stays absent.
func Resolve(bytes int64, source, modelConfig string, opts Options) (Request, error) {
	if bytes > 0 {
		return Request{Bytes: bytes, Source: source}, nil
	}
	if modelConfig == "" {
		return Request{Source: SourceUnset}, nil
	}
	res, err := FromFile(modelConfig, opts)
	if err != nil {
		return Request{}, err
	}
	return Request{Bytes: res.CounterBytes(), Source: SourceModelConfig, Detail: &res}, nil
}

// CounterBytes is what the connectors' byte counters see per request: with
// TP replication they move the replicated heads too, so the wire bytes.
func (r Result) CounterBytes() int64 {
	if r.WireBytesPerRequest > 0 {
		return r.WireBytesPerRequest
	}
	return r.BytesPerRequest
}
