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

package rolloutbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"k8s.io/client-go/kubernetes"

	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

// writeMethods are the HTTP methods of API writes.
var writeMethods = []string{"POST", "PUT", "PATCH", "DELETE"}

// requestStats are the operator's API requests over one case, from
// rest_client_requests_total, by "METHOD/code", and its webhook's eviction
// decisions by "decision/reason", and its rollout driver's eviction
// requests by result.
type requestStats struct {
	requests map[string]float64
	webhook  map[string]float64
	rollout  map[string]float64
	// statusWrites are the operator's budget status writes by
	// "writer/result" (tdb_status_writes_total).
	statusWrites map[string]float64
	// timings are histogram sums and counts: "what/sum" and "what/count",
	// what being "reconcile <controller>", "queue <controller>" (time in
	// the work queue) or "webhook <decision>".
	timings map[string]float64
}

func (s requestStats) minus(o requestStats) requestStats {
	return requestStats{requests: minus(s.requests, o.requests), webhook: minus(s.webhook, o.webhook),
		rollout: minus(s.rollout, o.rollout), statusWrites: minus(s.statusWrites, o.statusWrites), timings: minus(s.timings, o.timings)}
}

// mean formats the mean of a timing and its count, e.g. "12.3 ms x 45".
func (s requestStats) mean(what string) string {
	n := s.timings[what+"/count"]
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f ms x %d", 1000*s.timings[what+"/sum"]/n, int(n))
}

// writes sums the write requests, whatever their answer.
func (s requestStats) writes() float64 {
	n := 0.0
	for k, v := range s.requests {
		for _, m := range writeMethods {
			if strings.HasPrefix(k, m+"/") {
				n += v
			}
		}
	}
	return n
}

// statusConflicts returns the budget status writes that lost to a
// concurrent write (409) and all status writes.
func (s requestStats) statusConflicts() (conflicts, all float64) {
	for k, v := range s.statusWrites {
		if strings.HasSuffix(k, "/conflict") {
			conflicts += v
		}
		if !strings.HasSuffix(k, "/stale") { // not sent
			all += v
		}
	}
	return conflicts, all
}

// byCode sums the requests answered with code.
func (s requestStats) byCode(code string) float64 {
	n := 0.0
	for k, v := range s.requests {
		if strings.HasSuffix(k, "/"+code) {
			n += v
		}
	}
	return n
}

// evictions are the evictions the kube-apiserver granted during the case
// (201). Only the operator evicts in these cases.
func (r *result) evictions() float64 { return r.apiserver["201"] }

func minus(a, b map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range a {
		if d := v - b[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// scrapeOperator reads the operator's request and webhook counters.
func scrapeOperator() (requestStats, error) {
	s := requestStats{requests: map[string]float64{}, webhook: map[string]float64{}, rollout: map[string]float64{},
		statusWrites: map[string]float64{}, timings: map[string]float64{}}
	err := kwokenv.ScrapeMetrics(metricsPort, func(series string, v float64) {
		switch {
		case strings.HasPrefix(series, "rest_client_requests_total{"):
			s.requests[kwokenv.MetricLabel(series, "method")+"/"+kwokenv.MetricLabel(series, "code")] += v
		case strings.HasPrefix(series, "tdb_eviction_decisions_total{"):
			s.webhook[kwokenv.MetricLabel(series, "decision")+"/"+kwokenv.MetricLabel(series, "reason")] += v
		case strings.HasPrefix(series, "tdb_rollout_evictions_total{"):
			s.rollout[kwokenv.MetricLabel(series, "result")] += v
		case strings.HasPrefix(series, "tdb_status_writes_total{"):
			s.statusWrites[kwokenv.MetricLabel(series, "writer")+"/"+kwokenv.MetricLabel(series, "result")] += v
		}
		for prefix, what := range map[string]func() string{
			"controller_runtime_reconcile_time_seconds": func() string { return "reconcile " + kwokenv.MetricLabel(series, "controller") },
			"workqueue_queue_duration_seconds":          func() string { return "queue " + kwokenv.MetricLabel(series, "name") },
			"tdb_eviction_decision_duration_seconds":    func() string { return "webhook " + kwokenv.MetricLabel(series, "decision") },
		} {
			for _, part := range []string{"sum", "count"} {
				if strings.HasPrefix(series, prefix+"_"+part+"{") {
					s.timings[what()+"/"+part] += v
				}
			}
		}
	})
	return s, err
}

// scrapeAPIServer reads the kube-apiserver's eviction requests by code: an
// account of the evictions independent of the operator.
func scrapeAPIServer(ctx context.Context, cs kubernetes.Interface) (map[string]float64, error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	err = kwokenv.EachSeries(bytes.NewReader(raw), func(series string, v float64) {
		if strings.HasPrefix(series, "apiserver_request_total{") && kwokenv.MetricLabel(series, "subresource") == "eviction" &&
			kwokenv.MetricLabel(series, "resource") == "pods" {
			out[kwokenv.MetricLabel(series, "code")] += v
		}
	})
	return out, err
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// operatorLogSlice copies what the operator logged since offset to dst and
// returns the number of lines and its error lines counted by message.
func operatorLogSlice(path string, offset int64, dst string) (int, map[string]int) {
	errs := map[string]int{}
	f, err := os.Open(path)
	if err != nil {
		return 0, errs
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, errs
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return 0, errs
	}
	_ = os.WriteFile(dst, data, 0o644)
	lines := 0
	for _, l := range strings.Split(string(data), "\n") {
		if l == "" {
			continue
		}
		lines++
		var entry struct {
			Level string `json:"level"`
			Msg   string `json:"msg"`
			Err   string `json:"error"`
		}
		if json.Unmarshal([]byte(l), &entry) != nil || entry.Level != "error" {
			continue
		}
		key := entry.Msg
		if entry.Err != "" {
			key += ": " + shorten(entry.Err, 160)
		}
		errs[key]++
	}
	return lines, errs
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// counts formats a counter map, keys sorted.
func counts(m map[string]float64) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, int(m[k])))
	}
	return strings.Join(parts, " ")
}
