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

package kwokenv

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Bench is what a benchmark under test/perf runs against: a fresh local
// cluster with the operator running as a local process.
type Bench struct {
	Cluster  *Cluster
	Operator *Operator
	Client   client.Client
	// LogDir is a new temporary directory for the run's logs; the
	// operator logs to OperatorLog in it.
	LogDir, OperatorLog string

	webhookPort int
}

// StartBench tears down any cluster called name, brings up a fresh one with
// the given hack/cluster settings (e.g. "ZONES=3"), builds the manager and
// starts it with o (its LogPath is set to OperatorLog), printing what it
// does. logPrefix names the log directory. Close undoes it.
func StartBench(name, logPrefix, describe string, settings []string, o OperatorOptions) (*Bench, error) {
	logDir, err := os.MkdirTemp("", logPrefix)
	if err != nil {
		return nil, err
	}
	fmt.Printf(">> fresh local cluster %s (real kube-apiserver, controller-manager, scheduler %s; %s)\n", name, KubeVersion(), describe)
	if err := (&Cluster{Name: name}).DownIfExists(); err != nil {
		return nil, err
	}
	c, err := Up(name, settings...)
	if err != nil {
		return nil, err
	}
	b := &Bench{Cluster: c, LogDir: logDir, OperatorLog: filepath.Join(logDir, "operator.log"), webhookPort: o.WebhookPort}
	if _, err := BuildManager(); err != nil {
		b.Close(false)
		return nil, err
	}
	o.LogPath = b.OperatorLog
	if b.Operator, err = StartOperator(c, o); err != nil {
		b.Close(false)
		return nil, err
	}
	fmt.Printf("   operator running (webhook 127.0.0.1:%d, metrics :%d, probes :%d); logs in %s\n", o.WebhookPort, o.MetricsPort, o.ProbePort, logDir)
	if b.Client, err = NewClient(c.Kubeconfig); err != nil {
		b.Close(false)
		return nil, err
	}
	return b, nil
}

// Close stops the operator and tears the cluster down, or, with keep, says
// how to reach the cluster left up.
func (b *Bench) Close(keep bool) {
	if b.Operator != nil {
		b.Operator.Stop()
	}
	c := b.Cluster
	if keep {
		fmt.Printf("\nthe cluster is still up: export KUBECONFIG=%s\ntear it down with: make cluster-down CLUSTER_NAME=%s\n", c.Kubeconfig, c.Name)
		fmt.Printf("the operator is stopped and its webhook fails closed: evictions fail until it runs again on port %d, or until\n  KUBECONFIG=%s go run ./hack/localwebhook -remove\n", b.webhookPort, c.Kubeconfig)
		return
	}
	fmt.Println(">> tearing the cluster down")
	if err := c.Down(); err != nil {
		fmt.Fprintln(os.Stderr, "tearing the cluster down:", err)
	}
}

// Ready tells whether the operator answers its readiness probe now.
func (o *Operator) Ready() bool { return ProbeOK(o.probe) == nil }

// MetricLabel returns the value of label name in a Prometheus text-format
// series such as `requests_total{code="200",method="GET"}`.
func MetricLabel(series, name string) string {
	i := strings.Index(series, name+"=\"")
	if i < 0 {
		return ""
	}
	rest := series[i+len(name)+2:]
	if j := strings.IndexByte(rest, '"'); j >= 0 {
		return rest[:j]
	}
	return rest
}

// ScrapeMetrics reads the Prometheus text exposition served on the local
// port's /metrics and calls f for every sample.
func ScrapeMetrics(port int, f func(series string, v float64)) error {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port)) //nolint:noctx // local
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	err = EachSeries(resp.Body, f)
	_, _ = io.Copy(io.Discard, resp.Body)
	return err
}

// EachSeries calls f for every sample of a Prometheus text exposition: the
// series (name and labels) and its value.
func EachSeries(r io.Reader, f func(series string, v float64)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		sp := strings.LastIndexByte(l, ' ')
		if sp < 0 || strings.HasPrefix(l, "#") {
			continue
		}
		v, err := strconv.ParseFloat(l[sp+1:], 64)
		if err != nil {
			continue
		}
		f(l[:sp], v)
	}
	return sc.Err()
}

// ZoneList formats per-zone counts of the three-zone cluster.
func ZoneList(m map[string]int) string {
	return fmt.Sprintf("a=%d b=%d c=%d", m["zone-a"], m["zone-b"], m["zone-c"])
}

// Sum adds the counts.
func Sum(m map[string]int) int {
	s := 0
	for _, v := range m {
		s += v
	}
	return s
}

// Indent prefixes every line of s.
func Indent(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}
