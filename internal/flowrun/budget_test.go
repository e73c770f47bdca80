package flowrun

import (
	"sync"
	"testing"
)

func TestBudgetSharesExactly(t *testing.T) {
	const total = 1_000_003
	b := NewBudget(total)
	var mu sync.Mutex
	var sent int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := b.Take(4096)
				if n == 0 {
					return
				}
				if n > 4096 {
					t.Errorf("took %d, asked 4096", n)
				}
				mu.Lock()
				sent += int64(n)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if sent != total {
		t.Fatalf("streams took %d bytes, budget was %d", sent, total)
	}
}

func TestBudgetReturn(t *testing.T) {
	b := NewBudget(100)
	if n := b.Take(80); n != 80 {
		t.Fatalf("Take(80) = %d", n)
	}
	b.Return(30) // a write that moved only 50 of 80
	if n := b.Take(1000); n != 50 {
		t.Fatalf("after return, Take = %d, want 50", n)
	}
	if n := b.Take(1); n != 0 {
		t.Fatalf("spent budget gave %d", n)
	}
}

func TestUnlimitedBudget(t *testing.T) {
	for _, b := range []*Budget{nil, NewBudget(0)} {
		if n := b.Take(1 << 20); n != 1<<20 {
			t.Fatalf("unlimited Take = %d", n)
		}
	}
}
