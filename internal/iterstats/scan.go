package iterstats

import "fmt"

// A small JSON scanner for the iteration stats array. It validates the
// syntax as it goes, hands the fields the Reader uses to the typed setters
// in record.go and skips everything else without building values, so a
// poll is read without reflection and almost without allocation.

type kind uint8

const (
	kindNone kind = iota
	kindNumber
	kindString // raw is the content between the quotes, still escaped
	kindTrue
	kindFalse
	kindNull
	kindObject // skipped
	kindArray  // skipped
)

// maxDepth bounds nesting inside a record, so that hostile input cannot
// exhaust the stack.
const maxDepth = 64

// syntaxError is damage in the body at a byte offset.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.msg, e.off) }

type scanner struct {
	b []byte
	i int
}

func (s *scanner) fail(msg string) error { return &syntaxError{s.i, msg} }

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		if s.i >= len(s.b) {
			return s.fail(fmt.Sprintf("unexpected end, want %q", c))
		}
		return s.fail(fmt.Sprintf("unexpected %q, want %q", s.b[s.i], c))
	}
	s.i++
	return nil
}

// str reads a string at s.i (the opening quote) and returns its raw
// content.
func (s *scanner) str() ([]byte, error) {
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		for j < len(s.b) && plain[s.b[j]] {
			j++
		}
		if j >= len(s.b) {
			break
		}
		c := s.b[j]
		switch {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], nil
		case c == '\\':
			if j+1 >= len(s.b) {
				s.i = j
				return nil, s.fail("unterminated string")
			}
			switch s.b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if j+5 >= len(s.b) || !isHex(s.b[j+2]) || !isHex(s.b[j+3]) || !isHex(s.b[j+4]) || !isHex(s.b[j+5]) {
					s.i = j
					return nil, s.fail("bad \\u escape")
				}
				j += 5
			default:
				s.i = j
				return nil, s.fail("bad escape")
			}
		case c < 0x20:
			s.i = j
			return nil, s.fail("control character in string")
		}
	}
	s.i = len(s.b)
	return nil, s.fail("unterminated string")
}

// plain marks the bytes a string scan passes over without a look.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool { return c-'0' < 10 || c|0x20-'a' < 6 }

func isDigit(c byte) bool { return c-'0' < 10 }

// number reads a JSON number at s.i.
func (s *scanner) number() ([]byte, error) {
	start, j, b := s.i, s.i, s.b
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && isDigit(b[j]):
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	default:
		s.i = j
		return nil, s.fail("bad number")
	}
	if j < len(b) && b[j] == '.' {
		j++
		if j >= len(b) || !isDigit(b[j]) {
			s.i = j
			return nil, s.fail("bad number")
		}
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j >= len(b) || !isDigit(b[j]) {
			s.i = j
			return nil, s.fail("bad number")
		}
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	}
	s.i = j
	return b[start:j], nil
}

func (s *scanner) literal(word string, k kind) (kind, []byte, error) {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return kindNone, nil, s.fail("invalid literal")
	}
	s.i += len(word)
	return k, nil, nil
}

// value reads one value; objects and arrays are skipped (validated).
func (s *scanner) value(depth int) (kind, []byte, error) {
	switch c := s.peek(); {
	case c == '"':
		raw, err := s.str()
		return kindString, raw, err
	case c == '-' || isDigit(c):
		raw, err := s.number()
		return kindNumber, raw, err
	case c == 't':
		return s.literal("true", kindTrue)
	case c == 'f':
		return s.literal("false", kindFalse)
	case c == 'n':
		return s.literal("null", kindNull)
	case c == '{':
		return kindObject, nil, s.skipObject(depth + 1)
	case c == '[':
		return kindArray, nil, s.skipArray(depth + 1)
	case c == 0:
		return kindNone, nil, s.fail("unexpected end")
	default:
		return kindNone, nil, s.fail(fmt.Sprintf("unexpected %q", c))
	}
}

func (s *scanner) skipObject(depth int) error {
	return s.object(depth, func([]byte) error { _, _, err := s.value(depth); return err })
}

func (s *scanner) skipArray(depth int) error {
	return s.array(depth, func() error { _, _, err := s.value(depth); return err })
}

// object walks the object at s.i, calling field with each key (raw) with
// s.i at the value; field must consume the value.
func (s *scanner) object(depth int, field func(key []byte) error) error {
	if depth > maxDepth {
		return s.fail("nested too deep")
	}
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		if s.peek() != '"' {
			return s.fail("want a key")
		}
		key, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		s.ws()
		if err := field(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.fail("want ',' or '}'")
		}
	}
}

// array walks the array at s.i, calling elem with s.i at each element.
func (s *scanner) array(depth int, elem func() error) error {
	if depth > maxDepth {
		return s.fail("nested too deep")
	}
	if err := s.expect('['); err != nil {
		return err
	}
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		s.ws()
		if err := elem(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.fail("want ',' or ']'")
		}
	}
}

// readRecord decodes the object at s.i into rec; request stats go to the
// arena. A value of an unexpected type leaves its field unknown.
func (s *scanner) readRecord(rec *record, arena *[]reqStat) error {
	*rec = record{}
	return s.object(1, func(key []byte) error {
		if s.peek() == '{' {
			switch string(key) {
			case "kvCacheStats":
				rec.HasKV, rec.known = true, true
				return s.readKV(&rec.KV)
			}
			return s.skipObject(1)
		}
		if s.peek() == '[' {
			if string(key) == "requestStats" {
				rec.reqLo = int32(len(*arena))
				err := s.array(2, func() error {
					if s.peek() != '{' {
						_, _, err := s.value(2)
						return err
					}
					*arena = append(*arena, reqStat{})
					return s.readReq(&(*arena)[len(*arena)-1])
				})
				rec.reqHi = int32(len(*arena))
				rec.known = rec.known || rec.reqHi > rec.reqLo
				return err
			}
			return s.skipArray(1)
		}
		k, raw, err := s.value(1)
		if err != nil {
			return err
		}
		known := true
		switch string(key) {
		case "timestamp":
			rec.Timestamp.set(k, raw)
		case "iter":
			rec.Iter.set(k, raw)
		case "statsSequence":
			rec.Seq.set(k, raw)
		case "statsDroppedFrames":
			rec.DroppedFrames.set(k, raw)
		case "rank":
			rec.Rank.set(k, raw)
		case "attentionDpRank":
			rec.ADPRank.set(k, raw)
		case "iterLatencyMS":
			rec.IterLatencyMS.set(k, raw)
		case "hostStepTimeMS":
			rec.HostStepTimeMS.set(k, raw)
		case "numNewActiveRequests":
			rec.NumNewActive.set(k, raw)
		case "numActiveRequests":
			rec.NumActive.set(k, raw)
		case "numQueuedRequests":
			rec.NumQueued.set(k, raw)
		case "numCompletedRequests":
			rec.NumCompleted.set(k, raw)
		case "schedulerMode":
			rec.SchedulerMode.set(k, raw)
		default:
			known = false
		}
		rec.known = rec.known || (known && k != kindNull)
		return nil
	})
}

func (s *scanner) readKV(kv *kvStats) error {
	return s.object(2, func(key []byte) error {
		k, raw, err := s.value(2)
		if err != nil {
			return err
		}
		switch string(key) {
		case "maxNumBlocks":
			kv.MaxNumBlocks.set(k, raw)
		case "usedNumBlocks":
			kv.UsedNumBlocks.set(k, raw)
		case "allocTotalBlocks":
			kv.AllocTotalBlocks.set(k, raw)
		case "allocNewBlocks":
			kv.AllocNewBlocks.set(k, raw)
		case "reusedBlocks":
			kv.ReusedBlocks.set(k, raw)
		case "missedBlocks":
			kv.MissedBlocks.set(k, raw)
		}
		return nil
	})
}

func (s *scanner) readReq(q *reqStat) error {
	return s.object(3, func(key []byte) error {
		if string(key) == "disServingStats" && s.peek() == '{' {
			q.HasDis = true
			return s.object(4, func(key []byte) error {
				k, raw, err := s.value(4)
				if err != nil {
					return err
				}
				switch string(key) {
				case "kvCacheTransferMS":
					q.TransferMS.set(k, raw)
				case "kvCacheSize":
					q.Size.set(k, raw)
				}
				return nil
			})
		}
		k, raw, err := s.value(3)
		if err != nil {
			return err
		}
		switch string(key) {
		case "id":
			q.ID.set(k, raw)
		case "stage":
			q.Stage.set(k, raw)
		}
		return nil
	})
}
