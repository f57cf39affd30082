// Package point holds what the ledger computes at a tick and its history
// stores: the deployment's point, its stages, pools, routers and instances,
// made of values that may be absent (Num), and their JSON as the API writes
// and reads it.
package point

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Num is a value that may be absent. An absent value carries the reason and
// is never shown as 0.
type Num struct {
	V   float64
	Why string
}

// Val is a present value; +Inf and NaN are absent, never shown.
func Val(v float64) Num {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Absent(WhyNonFinite)
	}
	return Num{V: v}
}

// WhyNonFinite is the reason of a value that is +Inf or NaN.
const WhyNonFinite = "not a finite number: the exposition has +Inf or NaN"

// Absent is a missing value with its reason.
func Absent(why string) Num {
	if why == "" {
		why = "unknown"
	}
	return Num{Why: why}
}

// OK reports whether the value is present.
func (n Num) OK() bool { return n.Why == "" }

// MarshalJSON writes the number, or null when absent; the enclosing struct's
// "absent" object says why.
func (n Num) MarshalJSON() ([]byte, error) {
	if !n.OK() || math.IsNaN(n.V) || math.IsInf(n.V, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, n.V, 'g', -1, 64), nil
}

var numType = reflect.TypeOf(Num{})

// withAbsent marshals v (a struct) with an extra "absent" object mapping each
// absent Num field (by JSON name, nested with dots) to its reason.
func withAbsent(v any, alias any) ([]byte, error) {
	reasons := map[string]string{}
	collectAbsent(reflect.ValueOf(v), "", reasons)
	b, err := json.Marshal(alias)
	if err != nil || len(reasons) == 0 {
		return b, err
	}
	extra, err := json.Marshal(reasons)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+len(extra)+12)
	out = append(out, b[:len(b)-1]...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"absent":`...)
	out = append(out, extra...)
	return append(out, '}'), nil
}

func collectAbsent(v reflect.Value, prefix string, out map[string]string) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == numType {
			if n := v.Interface().(Num); !n.OK() {
				out[prefix] = n.Why
			}
			return
		}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, ok := jsonName(f)
			if !ok {
				continue
			}
			ft := f.Type
			if ft == numType || ft.Kind() == reflect.Struct && ft.PkgPath() == numType.PkgPath() && !hasMarshaler(ft) {
				collectAbsent(v.Field(i), join(prefix, name), out)
			}
		}
	}
}

func hasMarshaler(t reflect.Type) bool {
	return t.Implements(reflect.TypeOf((*json.Marshaler)(nil)).Elem()) && t != numType
}

func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, true
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}
