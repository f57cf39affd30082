package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// A BodyReader turns one target's fetched bodies into Observations. The
// Prometheus exposition is read by the Reader through the registered
// Adapters; a body in another format (TensorRT-LLM's JSON iteration
// statistics) is read by the BodyReader its package registers with
// RegisterFormat. A BodyReader is not safe for concurrent use; keep one per target.
type BodyReader interface {
	// Read reads one body fetched at time at (the midpoint of the HTTP
	// exchange) and returns the Observation, reused by the next call, and
	// the time to record it at.
	Read(body []byte, contentType string, at time.Time) (*Observation, time.Time, error)
}

// Format names the format of a target's body; FormatExposition (the zero
// value) is the Prometheus text or OpenMetrics exposition.
type Format string

const FormatExposition Format = ""

// BodyReaderConfig is what a BodyReader needs to know about its target.
type BodyReaderConfig struct {
	Name   string // for log messages
	Engine Engine
	Role   Role
	KV     KVSource
	Format Format
	Logger *slog.Logger
}

type format struct {
	engine Engine
	new    func(BodyReaderConfig) BodyReader
}

// RegisterFormat adds a body format that engine e serves besides its
// exposition; newReader makes one BodyReader per target.
func RegisterFormat(f Format, e Engine, newReader func(BodyReaderConfig) BodyReader) {
	registry.Lock()
	defer registry.Unlock()
	if registry.formats == nil {
		registry.formats = make(map[Format]format)
	}
	if _, dup := registry.formats[f]; dup || f == FormatExposition {
		panic(fmt.Sprintf("engine: format %q registered twice", f))
	}
	registry.formats[f] = format{e, newReader}
}

// ErrFormat is wrapped by NewBodyReader's error for a format nothing reads.
var ErrFormat = errors.New("unknown body format")

// NewBodyReader returns the BodyReader for a target: a Reader of the exposition,
// or the registered reader of cfg.Format.
func NewBodyReader(cfg BodyReaderConfig) (BodyReader, error) {
	if cfg.Format == FormatExposition {
		return exposition{NewReader(cfg.Engine, cfg.Role, cfg.KV)}, nil
	}
	registry.RLock()
	f, ok := registry.formats[cfg.Format]
	registry.RUnlock()
	switch {
	case !ok:
		return nil, fmt.Errorf("%w %q", ErrFormat, cfg.Format)
	case cfg.Engine != EngineAuto && cfg.Engine != f.engine:
		return nil, fmt.Errorf("%w: %s is served by %s, not %s", ErrFormat, cfg.Format, f.engine, cfg.Engine)
	}
	return f.new(cfg), nil
}

// exposition is the Reader as a BodyReader: the sample time is the fetch's.
type exposition struct{ *Reader }

func (e exposition) Read(body []byte, contentType string, at time.Time) (*Observation, time.Time, error) {
	o, err := e.Reader.Read(body, contentType)
	return o, at, err
}

// A ReasonError is a read error that names its own scrape-failure reason
// (the reason label of ptdmon's scrape-error counters), for BodyReaders whose
// failures the generic reasons (role, adapter, parse) do not describe.
type ReasonError interface {
	error
	Reason() string
}

// ErrorReason returns the reason named by an error in err's chain.
func ErrorReason(err error) (string, bool) {
	var re ReasonError
	if errors.As(err, &re) {
		return re.Reason(), true
	}
	return "", false
}
