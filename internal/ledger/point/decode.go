package point

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
)

// whyNotSent is the reason of a value whose key a response lacks: decoding
// never turns a missing value into 0.
const whyNotSent = "not in the response"

// UnmarshalJSON reads a number, or null as absent; the enclosing struct's
// "absent" object, read by its own UnmarshalJSON, then gives the reason.
func (n *Num) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*n = Absent("")
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = Num{V: v}
	return nil
}

// whyNotInJSON is the reason of a value the JSON does not carry.
const whyNotInJSON = "not carried in the JSON"

// UnmarshalJSON reads what MarshalJSON writes, reasons included; the
// waiting by reason, which the JSON does not carry, reads absent.
func (s *StagePoint) UnmarshalJSON(b []byte) error {
	type alias StagePoint
	err := withoutAbsent(b, reflect.ValueOf(s).Elem(), (*alias)(s))
	n := Absent(whyNotInJSON)
	s.WaitingBy = WaitingReasons{Capacity: n, Deferred: n}
	return err
}

// UnmarshalJSON reads what MarshalJSON writes, reasons included; the step
// time, which the JSON does not carry, reads absent.
func (b *Batch) UnmarshalJSON(data []byte) error {
	type alias Batch
	err := withoutAbsent(data, reflect.ValueOf(b).Elem(), (*alias)(b))
	b.Step = Absent(whyNotInJSON)
	return err
}

// UnmarshalJSON reads what MarshalJSON writes, reasons included.
func (k *KVPoint) UnmarshalJSON(b []byte) error {
	type alias KVPoint
	return withoutAbsent(b, reflect.ValueOf(k).Elem(), (*alias)(k))
}

// UnmarshalJSON reads what MarshalJSON writes, reasons included; the
// deferred waiting, which the JSON does not carry, reads absent.
func (p *InstancePoint) UnmarshalJSON(b []byte) error {
	type alias InstancePoint
	err := withoutAbsent(b, reflect.ValueOf(p).Elem(), (*alias)(p))
	p.WaitingDeferred = Absent(whyNotInJSON)
	return err
}

// UnmarshalJSON reads what MarshalJSON writes, reasons included.
func (p *Point) UnmarshalJSON(b []byte) error {
	type alias Point
	return withoutAbsent(b, reflect.ValueOf(p).Elem(), (*alias)(p))
}

// withoutAbsent is withAbsent's inverse: it decodes b into alias (a pointer
// to v's storage) and sets the reason of each value named in b's "absent"
// object. Every Num field of v's own level starts absent, so that a key the
// JSON lacks stays absent instead of reading 0.
func withoutAbsent(b []byte, v reflect.Value, alias any) error {
	v.SetZero()
	markUnsent(v)
	if err := json.Unmarshal(b, alias); err != nil {
		return err
	}
	var r struct {
		Absent map[string]string `json:"absent"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	for path, why := range r.Absent {
		if n := numAt(v, path); n != nil && !n.OK() {
			*n = Absent(why)
		}
	}
	return nil
}

// markUnsent makes every Num in v, nested structs of this package included,
// absent until the JSON gives it.
func markUnsent(v reflect.Value) {
	if v.Type() == numType {
		v.Set(reflect.ValueOf(Absent(whyNotSent)))
		return
	}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if _, ok := jsonName(f); ok && f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == numType.PkgPath() {
			markUnsent(v.Field(i))
		}
	}
}

// numAt finds the Num at a dotted JSON path, as collectAbsent names it.
func numAt(v reflect.Value, path string) *Num {
	for _, name := range strings.Split(path, ".") {
		if v.Kind() != reflect.Struct || v.Type() == numType {
			return nil
		}
		found := false
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			if n, ok := jsonName(t.Field(i)); ok && n == name {
				v, found = v.Field(i), true
				break
			}
		}
		if !found {
			return nil
		}
	}
	if v.Type() != numType {
		return nil
	}
	return v.Addr().Interface().(*Num)
}
