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
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every Linux
// this bench runs on.
const clockTicks = 100

// machineSampler reads, every second, how busy the machine is (/proc/stat)
// and the CPU time of each process that shares it with the drain: the
// cluster's components, the operator and this bench (its drains, watcher
// and pod remover). It says what the machine spent its CPUs on, and so what
// limits a run that is slower than the operator's own figures explain.
type machineSampler struct {
	procs   map[int]string // pid -> name
	started map[int]uint64 // pid -> its start time, to tell a reused pid
	cpus    int
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	samples []machineSample
}

type machineSample struct {
	at        time.Time
	busy, all float64         // /proc/stat ticks, every CPU together
	procTicks map[int]float64 // pid -> utime+stime ticks
}

// MachineFigures is what a drain cost the machine: the CPU time of each
// process over the drain in cores on average, the machine's busy cores on
// average, and in how many of the drain's one-second intervals it had no
// CPU to spare (all its CPUs together at least 95% busy).
type MachineFigures struct {
	CPUs             int                `json:"cpus"`
	BusyAvgCores     float64            `json:"busy_avg_cores"`
	SaturatedSeconds int                `json:"saturated_seconds"`
	Seconds          int                `json:"seconds"`
	CoresByProcess   map[string]float64 `json:"avg_cores_by_process"`
}

// clusterProcs finds the cluster's components: kwokctl runs each from a
// link in the cluster's bin/ directory (beside its kubeconfig), so their
// command line starts with that path (as hack/cluster/down.sh finds them).
func clusterProcs(kubeconfig string) map[int]string {
	prefix := filepath.Join(filepath.Dir(kubeconfig), "bin") + "/"
	procs := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		arg0, _, _ := bytes.Cut(cmdline, []byte{0})
		if strings.HasPrefix(string(arg0), prefix) {
			procs[pid] = filepath.Base(string(arg0))
		}
	}
	return procs
}

func startMachineSampler(kubeconfig string, operatorPid int) *machineSampler {
	procs := clusterProcs(kubeconfig)
	if len(procs) == 0 {
		fmt.Printf("   (no process of the cluster found under %s: the machine's figures name only the operator and the bench)\n", filepath.Dir(kubeconfig))
	}
	procs[operatorPid] = "operator"
	procs[os.Getpid()] = "bench (drains, watcher, pod remover)"
	s := &machineSampler{procs: procs, started: map[int]uint64{}, cpus: cpuCount(),
		stop: make(chan struct{}), done: make(chan struct{})}
	for pid := range procs {
		if st, err := readProcStat(pid); err == nil {
			s.started[pid] = st.start
		}
	}
	go func() {
		defer close(s.done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			s.record()
			select {
			case <-s.stop:
				s.record() // the drain's last moments
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *machineSampler) record() {
	if m, err := s.sample(); err == nil {
		s.mu.Lock()
		s.samples = append(s.samples, m)
		s.mu.Unlock()
	}
}

// cpuCount is the number of CPUs /proc/stat counts (its cpuN lines), which
// its first line sums; runtime.NumCPU counts only those this process may
// run on.
func cpuCount() int {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return runtime.NumCPU()
	}
	n := 0
	for _, l := range strings.Split(string(stat), "\n") {
		if len(l) > 3 && strings.HasPrefix(l, "cpu") && l[3] >= '0' && l[3] <= '9' {
			n++
		}
	}
	if n == 0 {
		return runtime.NumCPU()
	}
	return n
}

func (s *machineSampler) sample() (machineSample, error) {
	m := machineSample{at: time.Now(), procTicks: make(map[int]float64, len(s.procs))}
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return m, err
	}
	line, _, _ := strings.Cut(string(stat), "\n")
	busy, all, err := parseCPULine(line)
	if err != nil {
		return m, err
	}
	m.busy, m.all = busy, all
	for pid := range s.procs {
		// A process seen with another start time is not the one found at
		// the start (its pid reused): it no longer counts.
		if st, err := readProcStat(pid); err == nil && st.start == s.started[pid] {
			m.procTicks[pid] = st.ticks
		}
	}
	return m, nil
}

// parseCPULine reads /proc/stat's first line ("cpu  user nice system idle
// iowait irq softirq steal ..."): the ticks of every CPU together, and those
// not idle (idle and iowait are idle).
func parseCPULine(line string) (busy, all float64, err error) {
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("not /proc/stat's cpu line: %q", line)
	}
	// guest and guest_nice (fields 9 and 10) are counted in user and nice
	// already.
	for i, v := range f[1:min(len(f), 9)] {
		t, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %w", err)
		}
		all += t
		if i != 3 && i != 4 {
			busy += t
		}
	}
	return busy, all, nil
}

// procStat is what the bench reads of /proc/<pid>/stat.
type procStat struct {
	ticks float64 // user and system CPU time, in ticks
	start uint64  // start time, in ticks after boot
}

// procTicks is a process's user and system CPU time in ticks.
func procTicks(pid int) (float64, error) {
	st, err := readProcStat(pid)
	return st.ticks, err
}

func readProcStat(pid int) (procStat, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(stat)
}

// parseProcStat reads a /proc/<pid>/stat line. Its second field, the
// command, is in parentheses and may hold spaces and parentheses itself; the
// fields after its last ')' are state (3rd of the line), ..., utime (14th),
// stime (15th), ..., starttime (22nd).
func parseProcStat(stat []byte) (procStat, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("not a /proc/<pid>/stat line: %q", stat)
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("/proc/<pid>/stat: %d fields after the command, want at least 20", len(f))
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, fmt.Errorf("/proc/<pid>/stat: utime %q, stime %q, starttime %q", f[11], f[12], f[19])
	}
	return procStat{ticks: ut + st, start: start}, nil
}

func (s *machineSampler) finish() MachineFigures {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return machineFigures(s.samples, s.procs, s.cpus)
}

// machineFigures sums the samples up. A process's cores are its CPU time
// between the first and last samples that saw it over the whole window
// (one that ended early counts what it used); the machine's busy cores are
// its busy ticks over the window the same way, and its busy share of an
// interval its busy ticks over all its ticks (steal counts as busy: a CPU
// the machine did not get). "everything else" is what the machine was busy
// with beyond the processes named; it may be a little below zero, for the
// rounding of each process's ticks.
func machineFigures(samples []machineSample, procs map[int]string, cpus int) MachineFigures {
	f := MachineFigures{CPUs: cpus, CoresByProcess: map[string]float64{}}
	if len(samples) < 2 {
		return f
	}
	first, last := samples[0], samples[len(samples)-1]
	wall := last.at.Sub(first.at).Seconds()
	if wall <= 0 || last.all <= first.all {
		return f
	}
	f.Seconds = len(samples) - 1
	f.BusyAvgCores = (last.busy - first.busy) / clockTicks / wall
	for i := 1; i < len(samples); i++ {
		if d := samples[i].all - samples[i-1].all; d > 0 && (samples[i].busy-samples[i-1].busy)/d >= 0.95 {
			f.SaturatedSeconds++
		}
	}
	known := 0.0
	for pid, name := range procs {
		var from, to float64
		seen := false
		for _, m := range samples {
			t, ok := m.procTicks[pid]
			if !ok {
				continue
			}
			if !seen {
				from, seen = t, true
			}
			to = t
		}
		if !seen {
			continue
		}
		c := (to - from) / clockTicks / wall
		f.CoresByProcess[name] += c
		known += c
	}
	f.CoresByProcess["everything else"] = f.BusyAvgCores - known
	return f
}

// String is the figures on one line, the busiest process first.
func (f MachineFigures) String() string {
	if f.Seconds == 0 {
		return "-"
	}
	names := make([]string, 0, len(f.CoresByProcess))
	for n := range f.CoresByProcess {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return f.CoresByProcess[names[i]] > f.CoresByProcess[names[j]] })
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.2f", n, f.CoresByProcess[n]))
	}
	return fmt.Sprintf("%.2f of %d cores busy, %d of %d s saturated; %s",
		f.BusyAvgCores, f.CPUs, f.SaturatedSeconds, f.Seconds, strings.Join(parts, ", "))
}
