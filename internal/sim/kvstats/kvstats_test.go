package kvstats

import (
	"sync"
	"testing"
	"time"
)

func TestRecordAndSnapshot(t *testing.T) {
	s := New(2)
	s.Thread(0).RecordTransfer(10*time.Millisecond, 1<<30, 512)
	s.Thread(1).RecordTransfer(20*time.Millisecond, 1<<20, 8)
	s.Thread(1).RecordFailedTransfer()
	s.Thread(0).RecordFailedRecv()
	s.Thread(0).RecordExpiredReq()
	got := s.Snapshot()
	want := Snapshot{
		BytesTransferred: 1<<30 + 1<<20,
		Transfers:        2,
		Descriptors:      520,
		TransferTime:     30 * time.Millisecond,
		FailedTransfers:  1,
		FailedRecvs:      1,
		ExpiredReqs:      1,
	}
	if got != want {
		t.Fatalf("snapshot = %+v, want %+v", got, want)
	}
	if s.Thread(2) != nil || s.Thread(-1) != nil {
		t.Fatal("out-of-range Thread must be nil")
	}
}

func TestNegativeInputsNeverDecrease(t *testing.T) {
	s := New(1)
	s.Thread(0).RecordTransfer(time.Second, 100, 1)
	s.Thread(0).RecordTransfer(-time.Second, -50, -3)
	got := s.Snapshot()
	if got.BytesTransferred != 100 || got.TransferTime != time.Second || got.Descriptors != 1 || got.Transfers != 2 {
		t.Fatalf("negative inputs changed totals: %+v", got)
	}
}

func TestZeroValueStats(t *testing.T) {
	var s Stats
	if got := s.Snapshot(); got != (Snapshot{}) {
		t.Fatalf("zero Stats snapshot = %+v", got)
	}
	th := s.NewThread()
	th.RecordTransfer(time.Millisecond, 7, 1)
	if got := s.Snapshot().BytesTransferred; got != 7 {
		t.Fatalf("bytes = %d, want 7", got)
	}
	if s.Threads() != 1 {
		t.Fatalf("threads = %d", s.Threads())
	}
}

func TestSum(t *testing.T) {
	a := Snapshot{BytesTransferred: 1, Transfers: 1, FailedRecvs: 2}
	b := Snapshot{BytesTransferred: 2, Transfers: 3, ExpiredReqs: 1}
	got := Sum(a, b)
	if got.BytesTransferred != 3 || got.Transfers != 4 || got.FailedRecvs != 2 || got.ExpiredReqs != 1 {
		t.Fatalf("sum = %+v", got)
	}
}

// Writers on their own threads plus threads registered mid-run, and a reader
// that checks the totals it sees never decrease. Run with -race.
func TestConcurrentThreadsMonotonic(t *testing.T) {
	const (
		writers = 8
		perW    = 5000
		bytes   = 4096
	)
	s := New(writers / 2)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		var th *Thread
		if w < writers/2 {
			th = s.Thread(w)
		}
		wg.Add(1)
		go func(th *Thread) {
			defer wg.Done()
			if th == nil {
				th = s.NewThread()
			}
			for i := 0; i < perW; i++ {
				th.RecordTransfer(time.Microsecond, bytes, 2)
				if i%1000 == 0 {
					th.RecordFailedTransfer()
				}
			}
		}(th)
	}
	stop := make(chan struct{})
	readerErr := make(chan string, 1)
	go func() {
		var last Snapshot
		for {
			select {
			case <-stop:
				readerErr <- ""
				return
			default:
			}
			cur := s.Snapshot()
			if cur.BytesTransferred < last.BytesTransferred || cur.Transfers < last.Transfers ||
				cur.TransferTime < last.TransferTime || cur.FailedTransfers < last.FailedTransfers {
				readerErr <- "snapshot decreased"
				return
			}
			// Transfers is written last and read first, so bytes must cover it.
			if cur.BytesTransferred < cur.Transfers*bytes {
				readerErr <- "bytes behind transfers"
				return
			}
			last = cur
		}
	}()
	wg.Wait()
	close(stop)
	if msg := <-readerErr; msg != "" {
		t.Fatal(msg)
	}
	got := s.Snapshot()
	if got.Transfers != writers*perW || got.BytesTransferred != writers*perW*bytes ||
		got.Descriptors != writers*perW*2 || got.FailedTransfers != writers*perW/1000 {
		t.Fatalf("final snapshot %+v", got)
	}
	if s.Threads() != writers {
		t.Fatalf("threads = %d, want %d", s.Threads(), writers)
	}
}

func BenchmarkRecordTransfer(b *testing.B) {
	s := New(1)
	th := s.Thread(0)
	b.ReportAllocs()
	for b.Loop() {
		th.RecordTransfer(3*time.Millisecond, 1<<30, 512)
	}
}

func BenchmarkRecordTransferParallel(b *testing.B) {
	s := New(0)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		th := s.NewThread()
		for pb.Next() {
			th.RecordTransfer(3*time.Millisecond, 1<<30, 512)
		}
	})
}
