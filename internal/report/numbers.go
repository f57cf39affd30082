package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ptdmon/ptdmon/internal/advice"
)

// keyNum is one number of the JSON report: its key path (dots, list
// indices as numbers) and its text as the JSON writes it.
type keyNum struct {
	Key, Value string
}

// numbers are every number of the report's JSON but the charts' series,
// in the JSON's order: the appendix the Markdown and the HTML carry, so
// that neither holds less than the JSON, whatever it grows to hold.
func (r *Report) numbers() ([]keyNum, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("report numbers: %w", err)
	}
	return jsonNumbers(b, "series")
}

// jsonNumbers walks a JSON document's tokens and returns its numbers with
// their key paths, leaving out the top-level keys skip names.
func jsonNumbers(b []byte, skip ...string) ([]keyNum, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out []keyNum
	// Each open container: for an object, the key read last; for a list,
	// the index of the next value.
	type frame struct {
		list bool
		key  string
		i    int
		want bool // an object's next string is a key
	}
	var stack []frame
	path := func() string {
		parts := make([]string, len(stack))
		for i, f := range stack {
			if f.list {
				parts[i] = strconv.Itoa(f.i)
			} else {
				parts[i] = f.key
			}
		}
		return strings.Join(parts, ".")
	}
	skipped := func() bool {
		if len(stack) == 0 || stack[0].list {
			return false
		}
		for _, s := range skip {
			if stack[0].key == s {
				return true
			}
		}
		return false
	}
	// value ends a value in the innermost container.
	value := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].list {
				stack[n-1].i++
			} else {
				stack[n-1].want = true
			}
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("report numbers: %w", err)
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, frame{want: true})
			case '[':
				stack = append(stack, frame{list: true})
			default:
				stack = stack[:len(stack)-1]
				value()
			}
		case string:
			if n := len(stack); n > 0 && !stack[n-1].list && stack[n-1].want {
				stack[n-1].key, stack[n-1].want = v, false
				continue
			}
			value()
		case json.Number:
			if !skipped() {
				out = append(out, keyNum{path(), v.String()})
			}
			value()
		default:
			value()
		}
	}
}

// numbersNote heads the appendix in both text formats.
const numbersNote = "Every number of the JSON report (-format json) but the charts' series, by its key: what the sections above round, in full."

// kvAdviceText is the KV link's part of the advice, or "" without one.
func kvAdviceText(a *advice.KVAdvice) string {
	if a == nil || !a.BytesPerSecond.OK() {
		return ""
	}
	s := "KV link: " + bytesRate(ptr(a.BytesPerSecond.V)) + " needed"
	if a.Links.OK() {
		s += fmt.Sprintf(", %s links of the learned per-link bandwidth (now %d)", numN(a.Links), a.Current)
	} else {
		s += fmt.Sprintf(" (links: %s; now %d)", numN(a.Links), a.Current)
	}
	if a.Capacity.OK() {
		s += "; the links sustained " + bytesRate(ptr(a.Capacity.V)) + " at saturation"
	}
	return s
}
