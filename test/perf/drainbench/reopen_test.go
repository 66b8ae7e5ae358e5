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

package drainbench

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The reopen probe measures how soon a budget allows the next eviction once
// the pod it waits for is back: the time from the replacement of an evicted
// pod turning Ready (as a watch shows it) to the first eviction of another
// pod that the budget allows, tried every 5 ms with server-side dry runs
// (which ask the webhook and core's PDB check alike and change nothing). The
// time is signed: negative when the budget allowed before this client's own
// watch showed the pod Ready (its controller's watch was quicker). A client
// that retries at once when it sees the pod Ready gets a refusal on its
// first try while the budget has not reopened: those are counted too.
//
// Case a (a PDB, maxUnavailable 1): the other pod is in another zone; case
// b (maxUnavailable 1 per zone): the same zone; case c (one zone at a time):
// another zone, which waits for the first zone to recover.

const reopenTrials = 20

// reopenResult is one case's reopen probe.
type reopenResult struct {
	times []time.Duration
	// firstTryRefused counts the trials whose first try after the Ready
	// event was refused.
	firstTryRefused int
	err             error
}

func (r *reopenResult) quantile(q float64) time.Duration {
	if len(r.times) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), r.times...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func measureReopen(ctx context.Context, kubeconfig string, bc benchCase, ns string, ready func() error) *reopenResult {
	out := &reopenResult{}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		out.err = err
		return out
	}
	cfg.QPS, cfg.Burst = 1000, 1000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		out.err = err
		return out
	}
	for i := range reopenTrials {
		if err := ready(); err != nil {
			out.err = err
			return out
		}
		first := fmt.Sprintf("%s-zone-a-%d", app, i%perZone)
		other := fmt.Sprintf("%s-zone-b-%d", app, i%perZone)
		if bc.id == "b" {
			other = fmt.Sprintf("%s-zone-a-%d", app, (i+1)%perZone)
		}
		d, refusedFirst, err := reopenOnce(ctx, cs, ns, first, other)
		if err != nil {
			out.err = fmt.Errorf("trial %d: %w", i+1, err)
			return out
		}
		out.times = append(out.times, d)
		if refusedFirst {
			out.firstTryRefused++
		}
	}
	return out
}

// reopenOnce evicts first, then tries other until allowed once first's
// replacement is there.
func reopenOnce(ctx context.Context, cs kubernetes.Interface, ns, first, other string) (time.Duration, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	pod, err := cs.CoreV1().Pods(ns).Get(ctx, first, metav1.GetOptions{})
	if err != nil {
		return 0, false, err
	}
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", first).String(),
		ResourceVersion: pod.ResourceVersion})
	if err != nil {
		return 0, false, err
	}
	defer w.Stop()
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: first}}
	for {
		err := cs.PolicyV1().Evictions(ns).Evict(ctx, ev)
		if err == nil {
			break
		}
		if !apierrors.IsTooManyRequests(err) {
			return 0, false, fmt.Errorf("evicting %s: %w", first, err)
		}
		select {
		case <-ctx.Done():
			return 0, false, fmt.Errorf("evicting %s: %w", first, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	// The tries start once the replacement exists, and stop at the first
	// allowed one.
	type try struct {
		sent    time.Time
		allowed bool
	}
	tries := make(chan try, 100000)
	startTrying := make(chan struct{})
	stopTrying := make(chan struct{})
	go func() {
		defer close(tries)
		select {
		case <-startTrying:
		case <-stopTrying:
			return
		}
		dry := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: other},
			DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}}
		for {
			sent := time.Now()
			err := cs.PolicyV1().Evictions(ns).Evict(ctx, dry)
			tries <- try{sent: sent, allowed: err == nil}
			if err == nil || ctx.Err() != nil {
				return
			}
			select {
			case <-stopTrying:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	defer close(stopTrying)
	var readyAt time.Time
	started := false
	for readyAt.IsZero() {
		select {
		case <-ctx.Done():
			return 0, false, fmt.Errorf("waiting for the replacement of %s: %w", first, ctx.Err())
		case e, ok := <-w.ResultChan():
			if !ok {
				return 0, false, fmt.Errorf("the watch of %s ended", first)
			}
			p, isPod := e.Object.(*corev1.Pod)
			if !isPod || e.Type == watch.Deleted || p.UID == pod.UID {
				continue
			}
			if !started {
				close(startTrying)
				started = true
			}
			if p.DeletionTimestamp == nil && podIsReady(p) {
				readyAt = time.Now()
			}
		}
	}
	var firstAfter *try
	for t := range tries {
		if firstAfter == nil && !t.sent.Before(readyAt) {
			tt := t
			firstAfter = &tt
		}
		if t.allowed {
			// Negative when allowed before this client's watch showed the
			// pod Ready (the budget's controller saw it first).
			return t.sent.Sub(readyAt), firstAfter != nil && !firstAfter.allowed, nil
		}
	}
	return 0, false, fmt.Errorf("no dry-run eviction of %s was allowed within 2m (%w)", other, ctx.Err())
}

func podIsReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

var _ types.UID
