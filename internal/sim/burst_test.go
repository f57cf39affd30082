package sim

import (
	"strings"
	"testing"
	"time"
)

// TestBurstyArrivals checks that bursty arrivals keep the mean rate, arrive
// only during the on-phase of each period, and are far from uniform.
func TestBurstyArrivals(t *testing.T) {
	sc, err := LoadScenario("balanced")
	if err != nil {
		t.Fatal(err)
	}
	sc.Groups = sc.Groups[:1]
	sc.Groups[0].Rate = 4
	sc.Groups[0].Burst = BurstSpec{Period: 10 * time.Second, Duty: 0.3}
	m, err := NewModel(sc, 3, testEpoch)
	if err != nil {
		t.Fatal(err)
	}
	g := m.groups[0]
	const horizon = int64(2000 * time.Second)
	n, perSecond := 0, map[int64]int{}
	for m.now = 0; ; {
		m.now = m.nextArrival(g)
		if m.now >= horizon {
			break
		}
		n++
		if phase := m.now % int64(10*time.Second); phase >= int64(3*time.Second) {
			t.Fatalf("arrival at %v is in the off-phase", time.Duration(m.now))
		}
		perSecond[m.now/int64(time.Second)]++
	}
	if rate := float64(n) / 2000; rate < 3.8 || rate > 4.2 {
		t.Errorf("mean rate %.2f/s, want 4", rate)
	}
	if busy := len(perSecond); busy > 700 {
		t.Errorf("arrivals in %d of 2000 seconds; a 30%% duty cycle allows about 600", busy)
	}
}

func TestBurstValidation(t *testing.T) {
	sc, _ := LoadScenario("balanced")
	sc.Groups[0].Burst = BurstSpec{Period: time.Second, Duty: 0}
	if err := sc.Validate(); err == nil {
		t.Fatal("duty 0 with a period accepted")
	}
}

func TestScenarioFileJitterAndBurst(t *testing.T) {
	sc, err := ParseScenario("x", []byte("jitter: 0\ngroups:\n  - name: a\n    engine: vllm\n    connector: flagcx\n    rate: 3\n    burst: {period: 10s, duty: 0.25}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sc.JitterOrDefault() != 0 || sc.Groups[0].Burst != (BurstSpec{Period: 10 * time.Second, Duty: 0.25}) {
		t.Fatalf("jitter %v burst %+v", sc.Jitter, sc.Groups[0].Burst)
	}
	if _, err := ParseScenario("x", []byte("jitter: 1.5\n")); err == nil || !strings.Contains(err.Error(), "jitter") {
		t.Fatalf("jitter 1.5: %v", err)
	}
	sc, _ = LoadScenario("balanced")
	if sc.JitterOrDefault() != DefaultJitter {
		t.Fatalf("default jitter %v", sc.JitterOrDefault())
	}
}
