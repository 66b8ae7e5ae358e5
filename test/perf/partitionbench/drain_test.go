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

package partitionbench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/drain"
)

// drainOutcome is how the concurrent drains of one case went.
type drainOutcome struct {
	// refusals are the evictions refused with 429 and retried; evicted
	// those that went through.
	refusals, evicted int
	// errs are the other eviction errors and the failed drains.
	errs []string
	log  strings.Builder
}

// drainAll cordons every node at once, then drains them all at once with
// the drain library (the code kubectl drain runs: each pod's eviction
// retried retry after a 429, kubectl's 5 s by default) and returns when
// every drain has ended. Cordoning first keeps the scheduler from putting a
// replacement on an old node whose drain has not started yet.
func drainAll(ctx context.Context, cs kubernetes.Interface, nodes []string, timeout, retry time.Duration, start time.Time) *drainOutcome {
	out := &drainOutcome{}
	var mu sync.Mutex
	note := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(&out.log, "%7.2fs ", time.Since(start).Seconds())
		fmt.Fprintf(&out.log, format+"\n", args...)
	}
	helper := func(node string) *drain.Helper {
		return &drain.Helper{
			Ctx: ctx, Client: cs, Force: true, GracePeriodSeconds: -1, IgnoreAllDaemonSets: true,
			DeleteEmptyDirData: true, Timeout: timeout, EvictErrorRetryDelay: retry,
			Out: lineFunc(func(l string) { note("%s out %s", node, l) }),
			ErrOut: lineFunc(func(l string) {
				note("%s err %s", node, l)
				mu.Lock()
				defer mu.Unlock()
				if strings.Contains(l, "will retry after") {
					out.refusals++
				} else if strings.Contains(l, "error when evicting") {
					out.errs = append(out.errs, node+": "+l)
				}
			}),
			OnPodDeletionOrEvictionFinished: func(pod *corev1.Pod, _ bool, err error) {
				if err == nil {
					note("%s evicted %s", node, pod.Name)
					mu.Lock()
					out.evicted++
					mu.Unlock()
				}
			},
		}
	}
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { errs[i] = cordon(ctx, cs, helper(n), n) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		out.errs = append(out.errs, err.Error())
		return out
	}
	for i, n := range nodes {
		wg.Go(func() {
			if err := drain.RunNodeDrain(helper(n), n); err != nil {
				errs[i] = fmt.Errorf("draining %s: %w", n, err)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			out.errs = append(out.errs, err.Error())
		}
	}
	return out
}

func cordon(ctx context.Context, cs kubernetes.Interface, h *drain.Helper, node string) error {
	n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("cordoning %s: %w", node, err)
	}
	return drain.RunCordonOrUncordon(h, n, true)
}

// lineFunc is an io.Writer that calls itself for every line written to it
// (the drain library writes whole lines).
type lineFunc func(string)

func (f lineFunc) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if l != "" {
			f(l)
		}
	}
	return len(p), nil
}
