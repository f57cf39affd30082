package kvsize

// Request is B_request as ptdmon uses it, with what the number rests on:
// the one type of it from the flags to the ledger (KV req/s divides by it)
// and the JSON API, which writes it as is.
type Request struct {
	Bytes  int64   `json:"bytes,omitempty"`
	Basis  string  `json:"source"`           // "flag", "config", "model-config", "simulator" or "unset"
	Detail *Result `json:"detail,omitempty"` // the computation, when Basis is "model-config"
}

// What B_request rests on.
const (
	BasisFlag        = "flag"
	BasisConfig      = "config"
	BasisModelConfig = "model-config"
	BasisSimulator   = "simulator"
	BasisUnset       = "unset"
)

// Resolve settles B_request: bytes given directly (basis says by whom) win;
// else it is computed from the model's config.json at modelConfig; else it
// is unset, and KV req/s stays absent.
func Resolve(bytes int64, basis, modelConfig string, opts Options) (Request, error) {
	if bytes > 0 {
		return Request{Bytes: bytes, Basis: basis}, nil
	}
	if modelConfig == "" {
		return Request{Basis: BasisUnset}, nil
	}
	res, err := FromFile(modelConfig, opts)
	if err != nil {
		return Request{}, err
	}
	return Request{Bytes: res.CounterBytes(), Basis: BasisModelConfig, Detail: &res}, nil
}

// CounterBytes is what the connectors' byte counters see per request: with
// TP replication they move the replicated heads too, so the wire bytes.
func (r Result) CounterBytes() int64 {
	if r.WireBytesPerRequest > 0 {
		return r.WireBytesPerRequest
	}
	return r.BytesPerRequest
}
