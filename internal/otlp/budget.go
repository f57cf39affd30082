package otlp

import "sync"

// budget bounds the bytes of the payloads being decoded and joined at
// once.
type budget struct {
	mu        sync.Mutex
	max, used int64
}

// take reserves n bytes, or reports false when they do not fit now.
func (b *budget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		return false
	}
	b.used += n
	return true
}

func (b *budget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}
