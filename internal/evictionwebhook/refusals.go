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

package evictionwebhook

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// RefusalReporter emits an EvictionRefused event on a budget at most once
// per interval, counting the refusals in between, so that kubectl drain
// retrying every 5 seconds does not become an event storm.
type RefusalReporter struct {
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	Interval time.Duration

	mu        sync.Mutex
	last      map[types.UID]refusalWindow
	lastSweep time.Time
	pods      map[types.UID]time.Time
	podSweep  time.Time
}

// refusalWindowIdle is how many intervals a budget's window is kept after
// its last refusal: past it, its held-back count is not worth a budget that
// may be gone.
const refusalWindowIdle = 10

type refusalWindow struct {
	at         time.Time
	suppressed int
}

// Refused reports one refusal by tdb.
func (r *RefusalReporter) Refused(tdb *policyv1alpha1.TopologyDisruptionBudget, msg string) {
	if r == nil || r.Recorder == nil {
		return
	}
	now := r.Clock.Now()
	r.mu.Lock()
	if r.last == nil {
		r.last = map[types.UID]refusalWindow{}
	}
	if now.Sub(r.lastSweep) > r.Interval {
		r.lastSweep = now
		for uid, w := range r.last {
			if now.Sub(w.at) > refusalWindowIdle*r.Interval {
				delete(r.last, uid)
			}
		}
	}
	w, seen := r.last[tdb.UID]
	if seen && now.Sub(w.at) < r.Interval {
		w.suppressed++
		r.last[tdb.UID] = w
		r.mu.Unlock()
		return
	}
	r.last[tdb.UID] = refusalWindow{at: now}
	r.mu.Unlock()
	if w.suppressed > 0 {
		r.Recorder.Eventf(tdb, nil, corev1.EventTypeWarning, policyv1alpha1.EventReasonEvictionRefused, "Evict",
			"%s (and %d more refusals in the last %s)", msg, w.suppressed, now.Sub(w.at).Round(time.Second))
		return
	}
	r.Recorder.Eventf(tdb, nil, corev1.EventTypeWarning, policyv1alpha1.EventReasonEvictionRefused, "Evict", "%s", msg)
}

// RefusedPod reports a refusal on the refused pod itself, at most once per
// interval per pod, so that kubectl describe pod, and the pod events a
// planner such as Karpenter surfaces, say which budget holds the pod back.
func (r *RefusalReporter) RefusedPod(pod *corev1.Pod, msg string) {
	if r == nil || r.Recorder == nil || pod == nil {
		return
	}
	now := r.Clock.Now()
	r.mu.Lock()
	if r.pods == nil {
		r.pods = map[types.UID]time.Time{}
	}
	if at, ok := r.pods[pod.UID]; ok && now.Sub(at) < r.Interval {
		r.mu.Unlock()
		return
	}
	r.pods[pod.UID] = now
	if now.Sub(r.podSweep) > r.Interval {
		// At most once an interval: a storm over many pods costs no more
		// than one pass over them.
		r.podSweep = now
		for uid, at := range r.pods {
			if now.Sub(at) > r.Interval {
				delete(r.pods, uid)
			}
		}
	}
	r.mu.Unlock()
	r.Recorder.Eventf(pod, nil, corev1.EventTypeWarning, policyv1alpha1.EventReasonEvictionRefused, "Evict", "%s", msg)
}
