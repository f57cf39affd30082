package diagnose

import (
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// TestBytesPerTransferSkew: when one transfer carries 60% of B_request
// (prefix-cache hits), KV req/s = bytes ÷ B_request undercounts requests;
// a KV shortfall on that alone is not a KV verdict, and a note says why.
func TestBytesPerTransferSkew(t *testing.T) {
	const bReq = 1 << 30
	w := balancedWorld()
	w.kv = konst(4.8) // 8 req/s of transfers at 0.6 × B_request each
	w.boot, w.infl, w.prea, w.xfer = nil, nil, nil, nil
	pts := w.points(40, 1)
	for i := range pts {
		pts[i].KV.BytesWindow = ledger.Val(4.8 * bReq)
		pts[i].KV.Transfers = ledger.Val(8)
	}
	asPool(pts, bReq)
	v := Diagnose(pts, Config{})
	if v.Class == KVBound || !strings.Contains(strings.Join(v.Notes, "; "), "-40% off B_request") {
		t.Fatalf("stage %s, notes %q", v.Class, v.Notes)
	}
	// The same shortfall with transfers of B_request each is KV-bound.
	for i := range pts {
		pts[i].KV.Transfers = ledger.Val(4.8)
	}
	asPool(pts, bReq)
	if v := Diagnose(pts, Config{}); v.Class != KVBound {
		t.Fatalf("without skew: stage %s, evidence %q, notes %q", v.Class, v.Evidence, v.Notes)
	}
}

// asPool makes each of pts one pool whose B_request is bReq, as the
// ledger's points are: the pool's stages are the point's.
func asPool(pts []ledger.Point, bReq int64) {
	for i := range pts {
		p := &pts[i]
		p.Pools = []ledger.PoolPoint{{Name: "m", Instances: 2, KVRequest: kvsize.Request{Bytes: bReq},
			Prefill: p.Prefill, KV: p.KV, Decode: p.Decode, Router: ledger.NoRouter("m")}}
	}
}
