package advice

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

var numType = reflect.TypeOf(ledger.Num{})

// marshalWithAbsent marshals alias and adds an "absent" object naming each
// absent top-level Num field of v with its reason, as the ledger's points do.
func marshalWithAbsent(v, alias any) ([]byte, error) {
	reasons := map[string]string{}
	rv := reflect.ValueOf(v)
	rt := rv.Type()
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		if f.Type != numType || !f.IsExported() {
			continue
		}
		if n := rv.Field(i).Interface().(ledger.Num); !n.OK() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			reasons[name] = n.Why
		}
	}
	b, err := json.Marshal(alias)
	if err != nil || len(reasons) == 0 {
		return b, err
	}
	extra, err := json.Marshal(reasons)
	if err != nil {
		return nil, err
	}
	out := append(b[:len(b)-1:len(b)-1], `,"absent":`...)
	out = append(out, extra...)
	return append(out, '}'), nil
}
