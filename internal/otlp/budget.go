package otlp

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

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

var errOverBudget = errors.New("over the receiver's byte budget")

// budgetReader reads r, taking from b every byte it reads past free (the
// bytes reserved before reading), so that a body of unknown length counts
// against the budget while it is read; took is what it took. A body past
// max bytes fails with errTooLarge (it will never fit); one that does not
// fit the budget now, with errOverBudget.
type budgetReader struct {
	r                     io.Reader
	b                     *budget
	max, read, free, took int64
}

func (br *budgetReader) Read(p []byte) (int, error) {
	n, err := br.r.Read(p)
	if br.read += int64(n); br.read > br.max {
		return 0, fmt.Errorf("%w: body larger than the %d bytes allowed", errTooLarge, br.max)
	}
	over := int64(n) - br.free
	if over <= 0 {
		br.free -= int64(n)
		return n, err
	}
	br.free = 0
	if !br.b.take(over) {
		return 0, errOverBudget
	}
	br.took += over
	return n, err
}
