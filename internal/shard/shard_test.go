package shard

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"testing"
)

// byDefinition is hashmod as Prometheus documents it, written out
// independently of the relabel package.
func byDefinition(addr string, n uint64) uint64 {
	h := md5.Sum([]byte(addr))
	return binary.BigEndian.Uint64(h[8:]) % n
}

func TestParse(t *testing.T) {
	f := func(in string, want Shard, wantErr bool) {
		t.Helper()
		got, err := Parse(in)
		if (err != nil) != wantErr {
			t.Fatalf("Parse(%q) error = %v, want error %v", in, err, wantErr)
		}
		if err == nil && (got.Index != want.Index || got.Count != want.Count) {
			t.Errorf("Parse(%q) = %s, want %d/%d", in, got, want.Index, want.Count)
		}
	}
	f("", Shard{}, false)
	f("0/2", Shard{Index: 0, Count: 2}, false)
	f("3/4", Shard{Index: 3, Count: 4}, false)
	f("0/1", Shard{Index: 0, Count: 1}, false)
	f("2/2", Shard{}, true)
	f("1/0", Shard{}, true)
	f("1", Shard{}, true)
	f("-1/2", Shard{}, true)
	f("a/b", Shard{}, true)
}

// TestKeepMatchesDefinition: every address falls in exactly one shard, the
// one the published hashmod definition gives.
func TestKeepMatchesDefinition(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 7} {
		shards := make([]Shard, n)
		for i := range shards {
			var err error
			if shards[i], err = Parse(fmt.Sprintf("%d/%d", i, n)); err != nil {
				t.Fatal(err)
			}
		}
		counts := make([]int, n)
		for k := 0; k < 500; k++ {
			addr := fmt.Sprintf("10.0.%d.%d:8000", k/250, k%250)
			kept := -1
			for i, s := range shards {
				if s.Keep(addr) {
					if kept >= 0 {
						t.Fatalf("%s kept by shards %d and %d of %d", addr, kept, i, n)
					}
					kept = i
				}
			}
			if want := byDefinition(addr, n); kept != int(want) {
				t.Fatalf("%s: kept by shard %d of %d, hashmod gives %d", addr, kept, n, want)
			}
			counts[kept]++
		}
		for i, c := range counts {
			if n > 1 && (c < 500/int(n)/2) {
				t.Errorf("shard %d/%d keeps %d of 500 addresses: the hash does not spread", i, n, c)
			}
		}
	}
	if !(Shard{}).Keep("anything:1") {
		t.Error("the zero Shard must keep every target")
	}
}
