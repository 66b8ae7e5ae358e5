//go:build perf

/*
Copyright 2026 The tdb-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package scalebench

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

// go test -tags perf -run TestMachine ./test/perf/scalebench (no cluster).

func TestParseCPULine(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	busy, all, err := parseCPULine("cpu  100 5 50 800 40 3 2 0 7 1")
	if err != nil {
		t.Fatal(err)
	}
	if busy != 160 || all != 1000 {
		t.Errorf("busy, all = %v, %v; want 160, 1000 (idle and iowait idle; guest counted in user)", busy, all)
	}
	if _, _, err := parseCPULine("intr 1 2 3"); err == nil {
		t.Error("a line that is not the cpu line was read")
	}
}

func TestMachineFigures(t *testing.T) {
	t0 := time.Unix(1000, 0)
	// Two CPUs: 200 ticks a second. Second 1: 100% busy; second 2: 50%.
	samples := []machineSample{
		{at: t0, busy: 0, all: 0, procTicks: map[int]float64{1: 0, 2: 0, 3: 0}},
		{at: t0.Add(time.Second), busy: 200, all: 200, procTicks: map[int]float64{1: 120, 2: 40, 3: 10}},
		// pid 3 is gone: what it used until then counts.
		{at: t0.Add(2 * time.Second), busy: 300, all: 400, procTicks: map[int]float64{1: 180, 2: 60}},
	}
	f := machineFigures(samples, map[int]string{1: "kube-apiserver", 2: "etcd", 3: "kwok-controller", 4: "never seen"}, 2)
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if f.Seconds != 2 || f.SaturatedSeconds != 1 || !near(f.BusyAvgCores, 1.5) {
		t.Errorf("seconds %d, saturated %d, busy %v; want 2, 1, 1.5", f.Seconds, f.SaturatedSeconds, f.BusyAvgCores)
	}
	want := map[string]float64{"kube-apiserver": 0.9, "etcd": 0.3, "kwok-controller": 0.05, "everything else": 0.25}
	for n, w := range want {
		if !near(f.CoresByProcess[n], w) {
			t.Errorf("%s: %v cores, want %v", n, f.CoresByProcess[n], w)
		}
	}
	if _, ok := f.CoresByProcess["never seen"]; ok {
		t.Error("a process never sampled has a figure")
	}
	if s := f.String(); !strings.HasPrefix(s, "1.50 of 2 cores busy, 1 of 2 s saturated; kube-apiserver 0.90, etcd 0.30, everything else 0.25") {
		t.Errorf("String() = %q", s)
	}
}

func TestMachineSamplerSeesThisProcess(t *testing.T) {
	s := startMachineSampler("/nonexistent/kubeconfig.yaml", os.Getpid())
	deadline := time.Now().Add(2200 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++ // keep a CPU busy
	}
	f := s.finish()
	if f.Seconds < 2 {
		t.Fatalf("%d seconds sampled, want 2", f.Seconds)
	}
	// The bench's own entry replaces the operator's (the same pid here).
	if c := f.CoresByProcess["bench (drains, watcher, pod remover)"]; c < 0.3 {
		t.Errorf("this process, busy on a CPU, shows %.2f cores (%v); %d", c, f, x)
	}
	if f.BusyAvgCores < f.CoresByProcess["bench (drains, watcher, pod remover)"]-0.05 {
		t.Errorf("the machine's busy cores %.2f are fewer than this process's", f.BusyAvgCores)
	}
}
