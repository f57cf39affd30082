package scrape

import "testing"

// A pooled buffer is the smallest class that holds the body: never
// smaller, and at most 1.5 times a body of 64 KiB or more.
func TestSmallBufferClasses(t *testing.T) {
	f := func(n, want int) {
		t.Helper()
		b := getSmall(n)
		if cap(b) != want || len(b) != 0 {
			t.Errorf("getSmall(%d): len %d cap %d, want 0 and %d", n, len(b), cap(b), want)
		}
		if n >= 64<<10 && 2*cap(b) > 3*n {
			t.Errorf("getSmall(%d): cap %d is more than 1.5 times the body", n, cap(b))
		}
		putSmall(b)
	}
	f(1, 64<<10)
	f(64<<10, 64<<10)
	f(64<<10+1, 96<<10)
	f(182191+1, 192<<10) // a vLLM API server with four DP engines, and the byte that finds the end
	f(256<<10+1, 384<<10)
	f(FreeBytes, FreeBytes)

	// Buffers of other sizes are left to the GC, not pooled under a class
	// they do not fill.
	putSmall(make([]byte, 0, 100<<10))
	for range freePerClass + 1 {
		if b := getSmall(100 << 10); cap(b) != 128<<10 {
			t.Fatalf("getSmall(100 KiB) after pooling a 100 KiB buffer: cap %d, want %d", cap(b), 128<<10)
		}
	}
}
