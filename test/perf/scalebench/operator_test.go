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
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

// opSample is one look at the operator process.
type opSample struct {
	at         time.Time
	cpuSec     float64
	rssMiB     float64
	heapMiB    float64
	goroutines float64
	decisions  float64
}

// opSampler looks at the operator every second: its CPU time and RSS from
// /proc, its heap, goroutines and webhook decisions from its metrics.
type opSampler struct {
	pid, metricsPort int
	stop             chan struct{}
	done             chan struct{}
	mu               sync.Mutex
	samples          []opSample
}

func startOpSampler(pid, metricsPort int) *opSampler {
	s := &opSampler{pid: pid, metricsPort: metricsPort, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			if o, err := s.sample(); err == nil {
				s.mu.Lock()
				s.samples = append(s.samples, o)
				s.mu.Unlock()
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *opSampler) sample() (opSample, error) {
	o := opSample{at: time.Now()}
	ticks, err := procTicks(s.pid)
	if err != nil {
		return o, err
	}
	o.cpuSec = ticks / clockTicks
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid))
	if err != nil {
		return o, err
	}
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			kb, _ := strconv.ParseFloat(strings.Fields(l)[1], 64)
			o.rssMiB = kb / 1024
		}
	}
	err = kwokenv.ScrapeMetrics(s.metricsPort, func(series string, v float64) {
		switch {
		case series == "go_memstats_heap_inuse_bytes":
			o.heapMiB = v / (1 << 20)
		case series == "go_goroutines":
			o.goroutines = v
		case strings.HasPrefix(series, "tdb_eviction_decisions_total{"):
			o.decisions += v
		}
	})
	return o, err
}

// opFigures is what the samples of a drain show.
type opFigures struct {
	CPUSec, AvgCores, PeakHeapMiB, PeakRSSMiB, PeakGoroutines, PeakDecisionsPerSec float64
}

func (s *opSampler) finish() opFigures {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	var f opFigures
	if len(s.samples) < 2 {
		return f
	}
	first, last := s.samples[0], s.samples[len(s.samples)-1]
	f.CPUSec = last.cpuSec - first.cpuSec
	f.AvgCores = f.CPUSec / last.at.Sub(first.at).Seconds()
	for i, o := range s.samples {
		f.PeakHeapMiB = max(f.PeakHeapMiB, o.heapMiB)
		f.PeakRSSMiB = max(f.PeakRSSMiB, o.rssMiB)
		f.PeakGoroutines = max(f.PeakGoroutines, o.goroutines)
		if i > 0 {
			if dt := o.at.Sub(s.samples[i-1].at).Seconds(); dt > 0 {
				f.PeakDecisionsPerSec = max(f.PeakDecisionsPerSec, (o.decisions-s.samples[i-1].decisions)/dt)
			}
		}
	}
	return f
}

// operatorCounters reads the operator's status writes by writer, the status
// controller's by what they change, its webhook's decisions by decision
// and reason, and how many of the status controller's passes waited in its
// queue (all, and those within a second).
func operatorCounters(port int) (map[string]float64, error) {
	out := map[string]float64{}
	err := kwokenv.ScrapeMetrics(port, func(series string, v float64) {
		switch {
		case strings.HasPrefix(series, "tdb_status_writes_total{") && kwokenv.MetricLabel(series, "result") == "written":
			out["writes "+kwokenv.MetricLabel(series, "writer")] += v
		case strings.HasPrefix(series, "tdb_status_changes_written_total{"):
			out["changes "+kwokenv.MetricLabel(series, "change")] += v
		case strings.HasPrefix(series, "tdb_eviction_decisions_total{"):
			out["decisions "+kwokenv.MetricLabel(series, "decision")+" "+kwokenv.MetricLabel(series, "reason")] += v
		case kwokenv.MetricLabel(series, "name") != statusQueue:
		case strings.HasPrefix(series, "workqueue_queue_duration_seconds_count{"):
			out[queuedAll] += v
		case strings.HasPrefix(series, "workqueue_queue_duration_seconds_bucket{") && kwokenv.MetricLabel(series, "le") == "1":
			out[queuedWithin1s] += v
		}
	})
	return out, err
}

// The status controller's work queue, and operatorCounters' keys for it.
const (
	statusQueue    = "topologydisruptionbudget"
	queuedAll      = "queue status passes"
	queuedWithin1s = "queue status passes within 1s"
)

// apiRequests reads the API server's apiserver_request_total by verb and
// resource ("PUT topologydisruptionbudgets/status"), and the seconds they
// took (apiserver_request_duration_seconds_sum, under "seconds PUT ...").
func apiRequests(ctx context.Context, cs kubernetes.Interface) (map[string]float64, error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	err = kwokenv.EachSeries(bytes.NewReader(raw), func(series string, v float64) {
		prefix := ""
		switch {
		case strings.HasPrefix(series, "apiserver_request_total{"):
		case strings.HasPrefix(series, "apiserver_request_duration_seconds_sum{"):
			prefix = apiSeconds
		default:
			return
		}
		res := kwokenv.MetricLabel(series, "resource")
		if sub := kwokenv.MetricLabel(series, "subresource"); sub != "" {
			res += "/" + sub
		}
		out[prefix+kwokenv.MetricLabel(series, "verb")+" "+res] += v
	})
	return out, err
}

// apiSeconds prefixes apiRequests' keys of the seconds requests took.
const apiSeconds = "seconds "

// profile fetches a pprof profile of the operator into path.
func profile(ctx context.Context, port int, what, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/%s", port, what), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof %s: %s", what, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
