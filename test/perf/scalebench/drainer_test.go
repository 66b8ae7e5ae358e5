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
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kubectl/pkg/drain"
)

// evictionCall is one eviction POST as the drainer's client saw it.
type evictionCall struct {
	// pod is namespace/name.
	pod     string
	at      time.Time
	took    time.Duration
	code    int
	errText string
}

// timedTransport times every eviction POST.
type timedTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	// calls are the eviction POSTs, in the order they ended.
	calls []evictionCall
}

func (t *timedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/eviction") {
		return t.next.RoundTrip(req)
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	c := evictionCall{pod: podOf(req.URL.Path), at: start, took: time.Since(start)}
	if err != nil {
		c.errText = err.Error()
	} else {
		c.code = resp.StatusCode
	}
	t.mu.Lock()
	t.calls = append(t.calls, c)
	t.mu.Unlock()
	return resp, err
}

// podOf is the namespace/name of an eviction's path,
// /api/v1/namespaces/NS/pods/NAME/eviction.
func podOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i := 0; i+3 < len(parts); i++ {
		if parts[i] == "namespaces" && parts[i+2] == "pods" {
			return parts[i+1] + "/" + parts[i+3]
		}
	}
	return path
}

func (t *timedTransport) take() []evictionCall {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.calls
	t.calls = nil
	return out
}

// drainer is one process draining many nodes at once with the drain
// library, the code kubectl drain runs: a goroutine and a drain.Helper per
// node, one client for all (its own limits high enough not to throttle).
type drainer struct {
	cs        kubernetes.Interface
	transport *timedTransport
	// retry is the wait after a refused eviction (kubectl drain's: 5 s).
	retry time.Duration
}

func newDrainer(kubeconfig string, retry time.Duration) (*drainer, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 2000, 4000
	// Connections of their own (ownConnections): the drains' requests do
	// not share the watcher's.
	ownConnections(cfg)
	d := &drainer{retry: retry, transport: &timedTransport{}}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		d.transport.next = rt
		return d.transport
	})
	if d.cs, err = kubernetes.NewForConfig(rest.CopyConfig(cfg)); err != nil {
		return nil, err
	}
	return d, nil
}

// ownConnections gives the clients built from cfg connections to the API
// server of their own. client-go shares one HTTP/2 connection among the
// clients of a process with the same TLS settings: without it, the 100
// drains' requests (evictions, and a read of each evicted pod every second
// until it is gone) would share the watcher's connection, and a measuring
// instrument should not wait behind the load it measures. (It was not what
// delayed the watcher's status events at the drain's peak: kubectl, watching
// the budgets from a process of its own, received them at the same moments;
// docs/scale.md, *Where the status lag goes*.) With a dial function set,
// each client built from cfg gets a transport of its own: rest wraps Dial
// in a new DialHolder, part of the key of client-go's transport cache.
func ownConnections(cfg *rest.Config) {
	cfg.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
}

// nodeDrain is how one node's drain went.
type nodeDrain struct {
	node    string
	took    time.Duration
	evicted int
	err     error
}

// drainAll cordons and drains every node at once and returns when all are
// drained (or failed).
func (d *drainer) drainAll(ctx context.Context, nodes []string, timeout time.Duration) []nodeDrain {
	out := make([]nodeDrain, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			var mu sync.Mutex
			evicted := 0
			h := &drain.Helper{
				Ctx: ctx, Client: d.cs, Force: true, GracePeriodSeconds: -1, IgnoreAllDaemonSets: true,
				DeleteEmptyDirData: true, Timeout: timeout, EvictErrorRetryDelay: d.retry, ChunkSize: 500,
				Out: io.Discard, ErrOut: io.Discard,
				OnPodDeletionOrEvictionFinished: func(_ *corev1.Pod, _ bool, err error) {
					if err == nil {
						mu.Lock()
						evicted++
						mu.Unlock()
					}
				},
			}
			err := d.cordon(ctx, h, n)
			if err == nil {
				err = drain.RunNodeDrain(h, n)
			}
			mu.Lock()
			out[i] = nodeDrain{node: n, took: time.Since(start), evicted: evicted, err: err}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

func (d *drainer) cordon(ctx context.Context, h *drain.Helper, node string) error {
	n, err := d.cs.CoreV1().Nodes().Get(ctx, node, getOpts)
	if err != nil {
		return fmt.Errorf("cordoning %s: %w", node, err)
	}
	return drain.RunCordonOrUncordon(h, n, true)
}
