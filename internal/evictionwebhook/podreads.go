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
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/budgetstatus"
)

// recordedName says whether the newest known status of a covering budget
// holds a record of a pod named name (of any UID).
func recordedName(w *budgetstatus.Writer, covering []*coveringBudget, name string) bool {
	for _, c := range covering {
		if holdsName(w.Newest(c.tdb), name) {
			return true
		}
	}
	return false
}

// holdsName says whether the budget's status holds a record of a pod named
// name (of any UID).
func holdsName(tdb *policyv1alpha1.TopologyDisruptionBudget, name string) bool {
	for _, r := range tdb.Status.DisruptedPods {
		if r.Name == name {
			return true
		}
	}
	return false
}

// errStalePod ends a charge whose pod another pod replaced under its name
// (or that moved), seen on a live read the version being written called
// for.
var errStalePod = errors.New("another pod holds the name now")

// reread reads the pod from the API server before it is decided on, and
// says when that read ends the request: the pod is gone (allowed: the API
// server answers 404 for the eviction itself), another pod holds its name
// or it is bound elsewhere now (refused as stale by tdb: its domain was not
// found for it), or it now passes without its budgets (terminal, deleting;
// a Pending pod on a node is still decided, and recorded). Otherwise it
// returns the pod as it is now.
func (h *EvictionHandler) reread(ctx context.Context, pod *corev1.Pod, tdb *policyv1alpha1.TopologyDisruptionBudget) (*corev1.Pod, *budget.Decision, error) {
	fresh, err := h.livePod(ctx, pod)
	var end budget.Decision
	switch {
	case err != nil:
		return nil, nil, err
	case fresh == nil:
		end = budget.Decision{Allowed: true, Reason: budget.DecisionPodNotFound}
	case fresh.UID != pod.UID || fresh.Spec.NodeName != pod.Spec.NodeName:
		end = staleDecision(tdb)
	case budget.CanIgnoreBudget(fresh) && !budget.IsBoundPending(fresh):
		end = budget.Decision{Allowed: true, Reason: budget.DecisionPodNotRunning}
	default:
		return fresh, nil, nil
	}
	return nil, &end, nil
}

// recheckRecorded reads the pod live when the version about to be written
// holds a record of its name, with that version fixed: it may be a
// predecessor a lagging cache still shows (the record may be another
// replica's, unknown here when the request began), or the pod read earlier
// may have been replaced since. It returns the pod to decide on, or the
// decision that ends the request.
func (h *EvictionHandler) recheckRecorded(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, pod *corev1.Pod) (*corev1.Pod, *budget.Decision, error) {
	if !holdsName(tdb, pod.Name) {
		return pod, nil, nil
	}
	return h.reread(ctx, pod, tdb)
}

// preconditionMismatch says how the Eviction's preconditions fail on the
// live pod, or "" when they hold (or there are none).
func preconditionMismatch(p *metav1.Preconditions, pod *corev1.Pod) string {
	if p == nil {
		return ""
	}
	if p.UID != nil && *p.UID != "" && *p.UID != pod.UID {
		return fmt.Sprintf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, pod.UID)
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != "" && *p.ResourceVersion != pod.ResourceVersion {
		return fmt.Sprintf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, pod.ResourceVersion)
	}
	return ""
}

// pod reads the pod from the cache, or from the API server when the cache
// has not seen it yet, when live is set (preconditions are checked against
// the pod core will see), or when its cached state would let it pass
// uncharged. A nil pod means it does not exist.
//
// It also says whether the pod returned is the API server's copy.
func (h *EvictionHandler) pod(ctx context.Context, ns, name string, live bool) (*corev1.Pod, bool, error) {
	key := client.ObjectKey{Namespace: ns, Name: name}
	if live {
		pod, err := h.livePod(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		return pod, true, err
	}
	var pod corev1.Pod
	err := h.Cache.Get(ctx, key, &pod)
	fromServer := false
	if apierrors.IsNotFound(err) && h.APIReader != nil {
		err = h.APIReader.Get(ctx, key, &pod)
		fromServer = true
	}
	if apierrors.IsNotFound(err) {
		return nil, fromServer, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading pod %s/%s: %w", ns, name, err)
	}
	if !fromServer && (!budget.IsHealthy(&pod) || pod.Status.Phase != corev1.PodRunning) {
		// A pod that would pass uncharged (pending, not Ready) may have
		// become Running and Ready since the cache saw it: decide on the
		// API server's copy, as core does.
		live, err := h.livePod(ctx, &pod)
		return live, true, err
	}
	return &pod, fromServer, nil
}

// livePod reads the pod from the API server; nil when it does not exist.
func (h *EvictionHandler) livePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	var live corev1.Pod
	err := h.APIReader.Get(ctx, client.ObjectKeyFromObject(pod), &live)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return &live, nil
}
