package kvsize

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
)

// Request is what /api/v1/snapshot writes under kv_request_bytes and what
// `ptdmon top` reads back: the bytes, their source, and the computation as
// the kvbytes report writes it. The expected documents are built by hand
// from those parts, not from Request's own encoding.
func TestRequestJSON(t *testing.T) {
	model := filepath.Join("testdata", "llama-3.1-70b", "config.json")
	got, err := Resolve(0, BasisConfig, model, Options{SeqLen: 8192, KVDtype: "bf16"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := FromFile(model, Options{SeqLen: 8192, KVDtype: "bf16"})
	if err != nil {
		t.Fatal(err)
	}
	f := func(name string, r Request, want map[string]any) {
		t.Helper()
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Through JSON as any client reads it.
		wb, _ := json.Marshal(want)
		var wdoc map[string]any
		json.Unmarshal(wb, &wdoc)
		if !reflect.DeepEqual(doc, wdoc) {
			t.Errorf("%s: %s\nwant %s", name, b, wb)
		}
		var back Request
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, r) {
			t.Errorf("%s: decodes to %+v (%v), want %+v", name, back, err, r)
		}
	}
	f("from the model", got, map[string]any{"bytes": 80 * 8 * 128 * 2 * 2 * 8192, "source": "model-config", "detail": res})
	f("given", Request{Bytes: 1 << 30, Basis: BasisFlag}, map[string]any{"bytes": 1 << 30, "source": "flag"})
	f("unset", Request{Basis: BasisUnset}, map[string]any{"source": "unset"})
}
