package fpm

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// The fixtures are made by testdata/fpm.py with Python's msgpack, laid out
// as the engines' msgspec Structs encode (its header names the upstream
// files).
func TestDecode(t *testing.T) {
	f := func(file string, want Message, wantErr error) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(b)
		if wantErr != nil {
			if !errors.Is(err, wantErr) {
				t.Errorf("%s: err %v, want %v", file, err, wantErr)
			}
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", file, got, want)
		}
	}
	f("vllm_pass.msgpack", Message{Version: 1, WorkerID: "decode-0", DPRank: 1, CounterID: 41, WallTime: 0.0231,
		Scheduled: Requests{PrefillRequests: 2, PrefillTokens: 4096, PrefillLengthVar: 1024, PrefillKVTokens: 512, DecodeRequests: 30, DecodeKVTokens: 61440},
		Queued:    Requests{PrefillRequests: 1, PrefillTokens: 2048, DecodeRequests: 3}}, nil)
	f("vllm_heartbeat.msgpack", Message{Version: 1, WorkerID: "decode-0", DPRank: 1, CounterID: 42}, nil)
	f("sglang_pass.msgpack", Message{WorkerID: "endpoint-42", DPRank: 2, WallTime: 0.0172,
		Scheduled: Requests{DecodeRequests: 64, DecodeKVTokens: 131072}}, nil)
	f("vllm_version2.msgpack", Message{}, ErrVersion)
}

func TestDecodeRejects(t *testing.T) {
	f := func(name string, payload []byte) {
		t.Helper()
		if m, err := Decode(payload); err == nil {
			t.Errorf("%s: decoded %+v, want an error", name, m)
		}
	}
	pass, err := os.ReadFile("testdata/vllm_pass.msgpack")
	if err != nil {
		t.Fatal(err)
	}
	f("truncated", pass[:len(pass)/2])
	f("empty", nil)
	f("an array", []byte{0x91, 0x01})
	f("wall_time a string", []byte("\x81\xa9wall_time\xa1x"))
	// {"wall_time": -1.0}, {"wall_time": NaN}, {"wall_time": 1e9}
	f("negative wall_time", append([]byte("\x81\xa9wall_time\xcb"), f64(-1)...))
	f("NaN wall_time", append([]byte("\x81\xa9wall_time\xcb"), f64(math.NaN())...))
	f("a year's wall_time", append([]byte("\x81\xa9wall_time\xcb"), f64(3.2e7)...))
}

// f64 is v as msgpack's float 64 payload (big-endian).
func f64(v float64) []byte {
	u := math.Float64bits(v)
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(u >> (56 - 8*i))
	}
	return b
}

func FuzzDecode(f *testing.F) {
	for _, name := range []string{"vllm_pass", "vllm_heartbeat", "sglang_pass", "vllm_version2"} {
		b, err := os.ReadFile(filepath.Join("testdata", name+".msgpack"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err == nil && (m.WallTime < 0 || m.WallTime > maxWallTime || (m.Version != 0 && m.Version != Version)) {
			t.Errorf("accepted %+v", m)
		}
		_, _, _ = parseFrames([][]byte{nil, make([]byte, 8), b}) // must not panic
	})
}
