package iterstats

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// The iteration stats array is read one record at a time with
// encoding/json's Decoder, so a body damaged half-way still yields the
// records before the damage (reads drain the endpoint: they cannot be
// asked for again). Fields are kept as raw JSON and handed to the typed
// setters in record.go, so a value of an unexpected type leaves its field
// unknown instead of failing the record.

type kind uint8

const (
	kindNone kind = iota
	kindNumber
	kindString // raw is the content between the quotes, still escaped
	kindTrue
	kindFalse
	kindNull
	kindObject
	kindArray
)

// classify splits a raw JSON value into its kind and the bytes the setters read.
func classify(raw json.RawMessage) (kind, []byte) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return kindNone, nil
	}
	switch c := raw[0]; {
	case c == '"':
		return kindString, raw[1 : len(raw)-1]
	case c == '-' || isDigit(c):
		return kindNumber, raw
	case c == 't':
		return kindTrue, nil
	case c == 'f':
		return kindFalse, nil
	case c == 'n':
		return kindNull, nil
	case c == '{':
		return kindObject, nil
	case c == '[':
		return kindArray, nil
	}
	return kindNone, nil
}

func isDigit(c byte) bool { return c-'0' < 10 }

// rawRecord holds the IterationStats keys the Reader uses (docs/trtllm.md#top-level-fields).
type rawRecord struct {
	Timestamp      json.RawMessage `json:"timestamp"`
	Iter           json.RawMessage `json:"iter"`
	Seq            json.RawMessage `json:"statsSequence"`
	DroppedFrames  json.RawMessage `json:"statsDroppedFrames"`
	Rank           json.RawMessage `json:"rank"`
	ADPRank        json.RawMessage `json:"attentionDpRank"`
	IterLatencyMS  json.RawMessage `json:"iterLatencyMS"`
	HostStepTimeMS json.RawMessage `json:"hostStepTimeMS"`
	NumNewActive   json.RawMessage `json:"numNewActiveRequests"`
	NumActive      json.RawMessage `json:"numActiveRequests"`
	NumQueued      json.RawMessage `json:"numQueuedRequests"`
	NumCompleted   json.RawMessage `json:"numCompletedRequests"`
	SchedulerMode  json.RawMessage `json:"schedulerMode"`
	KV             json.RawMessage `json:"kvCacheStats"`
	RequestStats   json.RawMessage `json:"requestStats"`
}

type rawKV struct {
	MaxNumBlocks     json.RawMessage `json:"maxNumBlocks"`
	UsedNumBlocks    json.RawMessage `json:"usedNumBlocks"`
	AllocTotalBlocks json.RawMessage `json:"allocTotalBlocks"`
	AllocNewBlocks   json.RawMessage `json:"allocNewBlocks"`
	ReusedBlocks     json.RawMessage `json:"reusedBlocks"`
	MissedBlocks     json.RawMessage `json:"missedBlocks"`
}

type rawReq struct {
	ID    json.RawMessage `json:"id"`
	Stage json.RawMessage `json:"stage"`
	Dis   json.RawMessage `json:"disServingStats"`
}

type rawDis struct {
	TransferMS json.RawMessage `json:"kvCacheTransferMS"`
	Size       json.RawMessage `json:"kvCacheSize"`
}

// setter is one of record.go's typed fields.
type setter interface{ set(kind, []byte) }

// put sets f from raw and reports whether raw held a non-null value.
func put(f setter, raw json.RawMessage) bool {
	k, b := classify(raw)
	f.set(k, b)
	return k != kindNone && k != kindNull
}

// object reports whether raw is a JSON object.
func object(raw json.RawMessage) bool {
	k, _ := classify(raw)
	return k == kindObject
}

// toRecord fills rec from one raw record; request stats go to the arena.
func toRecord(in *rawRecord, rec *record, arena *[]reqStat) {
	*rec = record{}
	known := false
	for _, f := range []struct {
		f   setter
		raw json.RawMessage
	}{
		{&rec.Timestamp, in.Timestamp}, {&rec.Iter, in.Iter}, {&rec.Seq, in.Seq},
		{&rec.DroppedFrames, in.DroppedFrames}, {&rec.Rank, in.Rank}, {&rec.ADPRank, in.ADPRank},
		{&rec.IterLatencyMS, in.IterLatencyMS}, {&rec.HostStepTimeMS, in.HostStepTimeMS},
		{&rec.NumNewActive, in.NumNewActive}, {&rec.NumActive, in.NumActive}, {&rec.NumQueued, in.NumQueued},
		{&rec.NumCompleted, in.NumCompleted}, {&rec.SchedulerMode, in.SchedulerMode},
	} {
		known = put(f.f, f.raw) || known
	}
	if object(in.KV) {
		var kv rawKV
		if json.Unmarshal(in.KV, &kv) == nil {
			rec.HasKV, known = true, true
			put(&rec.KV.MaxNumBlocks, kv.MaxNumBlocks)
			put(&rec.KV.UsedNumBlocks, kv.UsedNumBlocks)
			put(&rec.KV.AllocTotalBlocks, kv.AllocTotalBlocks)
			put(&rec.KV.AllocNewBlocks, kv.AllocNewBlocks)
			put(&rec.KV.ReusedBlocks, kv.ReusedBlocks)
			put(&rec.KV.MissedBlocks, kv.MissedBlocks)
		}
	}
	rec.reqLo = int32(len(*arena))
	var reqs []rawReq
	if k, _ := classify(in.RequestStats); k == kindArray {
		// A malformed element is left zero (no id) and skipped below; the
		// others are still read.
		_ = json.Unmarshal(in.RequestStats, &reqs)
		for _, q := range reqs {
			if k, _ := classify(q.ID); k != kindNumber && k != kindString {
				continue
			}
			var st reqStat
			st.ID.setRaw(q.ID)
			put(&st.Stage, q.Stage)
			if object(q.Dis) {
				var d rawDis
				if json.Unmarshal(q.Dis, &d) == nil {
					st.HasDis = true
					put(&st.TransferMS, d.TransferMS)
					put(&st.Size, d.Size)
				}
			}
			*arena = append(*arena, st)
		}
	}
	rec.reqHi = int32(len(*arena))
	rec.known = known || rec.reqHi > rec.reqLo
}

// syntaxError is damage in the body at a byte offset.
type syntaxError struct {
	off int64
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.msg, e.off) }

// records walks the array in body, calling each with every element that is
// an object (others are counted by skipped). An error after the array
// started is damage: the elements before it were delivered.
func records(body []byte, each func(*rawRecord), skipped func()) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	wrap := func(err error) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return &syntaxError{se.Offset, se.Error()}
		}
		return &syntaxError{dec.InputOffset(), err.Error()}
	}
	if _, err := dec.Token(); err != nil { // '[': checked by the caller
		return wrap(err)
	}
	for dec.More() {
		// The raw fields accept any JSON value, so the only type error left
		// is an element that is not an object; the decoder has consumed it.
		var rec rawRecord
		if err := dec.Decode(&rec); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				skipped()
				continue
			}
			return wrap(err)
		}
		each(&rec)
	}
	if _, err := dec.Token(); err != nil { // ']'
		return wrap(err)
	}
	return nil
}
