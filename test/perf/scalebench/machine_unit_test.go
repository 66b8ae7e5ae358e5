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
	"syscall"
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

func TestParseProcStat(t *testing.T) {
	// A command with spaces and parentheses; utime 1234, stime 56,
	// starttime 98765 (fields 14, 15 and 22 of the line).
	line := "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 900 0 7 0 1234 56 11 22 20 0 8 0 98765 2000000 300 18446744073709551615\n"
	st, err := parseProcStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if st.ticks != 1290 || st.start != 98765 {
		t.Errorf("ticks %v, start %d; want 1290 (utime+stime), 98765", st.ticks, st.start)
	}
	if _, err := parseProcStat([]byte("4242 (short) S 1 2 3")); err == nil {
		t.Error("a line with too few fields was read")
	}
	if _, err := parseProcStat([]byte("4242 (x) S 1 4242 4242 0 -1 4194560 900 0 7 0 abc 56 11 22 20 0 8 0 98765 2")); err == nil {
		t.Error("a utime that is not a number was read as one")
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
	if f.Seconds != 2 || f.SaturatedSeconds != 1 || !near(f.BusyAvgCores, 1.5) || f.CPUs != 2 {
		t.Errorf("seconds %d, saturated %d, busy %v, cpus %d; want 2, 1, 1.5, 2", f.Seconds, f.SaturatedSeconds, f.BusyAvgCores, f.CPUs)
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

func TestMachineSaturatedThreshold(t *testing.T) {
	t0 := time.Unix(1000, 0)
	// 95% busy is saturated, 94.5% is not.
	samples := []machineSample{
		{at: t0},
		{at: t0.Add(time.Second), busy: 190, all: 200},
		{at: t0.Add(2 * time.Second), busy: 379, all: 400},
	}
	if f := machineFigures(samples, nil, 2); f.SaturatedSeconds != 1 {
		t.Errorf("saturated %d of 2 intervals (95%% and 94.5%% busy), want 1", f.SaturatedSeconds)
	}
}

func TestMachineSamplerSeesThisProcess(t *testing.T) {
	var before syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &before); err != nil {
		t.Fatal(err)
	}
	s := startMachineSampler("/nonexistent/kubeconfig.yaml", os.Getpid())
	deadline := time.Now().Add(10 * time.Second)
	x := 0
	for time.Now().Before(deadline) { // keep a CPU busy over three samples
		x++
		if x%(1<<20) == 0 {
			s.mu.Lock()
			n := len(s.samples)
			s.mu.Unlock()
			if n >= 3 {
				break
			}
		}
	}
	f := s.finish()
	var after syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &after); err != nil {
		t.Fatal(err)
	}
	if f.Seconds < 2 {
		t.Fatalf("%d intervals sampled, want at least 2", f.Seconds)
	}
	// What the kernel says this process used, in cores over the samples'
	// window (which lies within the rusage window: at most that much).
	s.mu.Lock()
	wall := s.samples[len(s.samples)-1].at.Sub(s.samples[0].at).Seconds()
	s.mu.Unlock()
	used := (tv(after.Utime) + tv(after.Stime) - tv(before.Utime) - tv(before.Stime)) / wall
	// The bench's own entry replaces the operator's (the same pid here).
	got := f.CoresByProcess["bench (drains, watcher, pod remover)"]
	// Ticks are 10 ms: a figure may be short by two ticks at each end.
	slack := 0.05 + 0.04/wall
	if got <= 0 || got > used+slack || got < used*0.5-slack {
		t.Errorf("this process, busy on a CPU, shows %.3f cores; the kernel's rusage says %.3f (%d loops)", got, used, x)
	}
	if f.BusyAvgCores < got-slack {
		t.Errorf("the machine's busy cores %.3f are fewer than this process's %.3f", f.BusyAvgCores, got)
	}
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
