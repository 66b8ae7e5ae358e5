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
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/budgetstatus"
)

// commitAll decides and charges an eviction covered by several budgets (or
// a dry run) under the process's lock of each covering budget, taken in
// name order: requests for the same budget decide one after the other,
// each from the newest version known here (see ledger). The verdict is
// made again on the versions held, and the budgets charged in turn; if one
// refuses on a fresh read, the charges this request made are undone.
func (h *EvictionHandler) commitAll(ctx context.Context, er evictionRequest, covering []*coveringBudget, pod *corev1.Pod,
	pdbs []policyv1.PodDisruptionBudget, now time.Time, names []string) (result, error) {
	for _, c := range covering {
		if err := c.entry.acquire(ctx); err != nil {
			return result{}, fmt.Errorf("waiting for budget %s/%s: %w", c.tdb.Namespace, c.tdb.Name, err)
		}
		defer c.entry.release()
		fresh := h.status().Newest(c.tdb)
		if fresh.UID != c.tdb.UID || fresh.Generation != c.tdb.Generation {
			return refused(c.tdb, staleDecision(c.tdb), names), nil
		}
		c.tdb = fresh
	}
	if !budget.IsHealthy(pod) {
		// With the versions fixed, decide on the pod as it is now: a pod
		// that was not Ready (and would pass uncharged) may have turned
		// Ready.
		fresh, end, err := h.reread(ctx, pod, covering[0].tdb)
		if end != nil || err != nil {
			return ended(end, covering[0].tdb, names), err
		}
		pod = fresh
	}
	// First decide against every budget as held: a refusal costs no write.
	v := h.verdict(ctx, pod, covering, pdbs, now, false, true)
	if !v.Allowed {
		return answerOf(v, covering, names), nil
	}
	if er.dryRun {
		return result{outcome: outcome{"allowed", v.Reason}, budgets: names}, nil
	}
	// The domains were found from the nodes as the request first saw them:
	// a node relabelled since would charge the wrong domain.
	for _, c := range covering {
		if !h.sameDomain(ctx, c.tdb, pod, c.domain, c.nodeGone) {
			return refused(c.tdb, staleDecision(c.tdb), names), nil
		}
	}
	reason := v.Reason
	var charged []charge
	for i, c := range covering {
		d, err := h.charge(ctx, c, &pod, v.Decisions[i], now)
		if err != nil || !d.Allowed {
			if uerr := h.undo(ctx, er.undoBy, charged, pod); uerr != nil {
				err = errors.Join(err, fmt.Errorf("undoing the charges of an eviction another budget refused: %w", uerr))
			}
			if err != nil {
				return result{}, err
			}
			return refused(c.tdb, d, names), nil
		}
		if d.Status != nil {
			reason = d.Reason
		}
		if d.Reason == budget.DecisionCharged {
			// Only charges are undone: a renewed or uncharged record spends
			// no allowance, and may be another request's to keep.
			charged = append(charged, charge{budget: c, at: now})
		}
	}
	return result{outcome: outcome{"allowed", reason}, budgets: names}, nil
}

// charge is a record this request wrote, to undo if another budget refuses.
type charge struct {
	budget *coveringBudget
	at     time.Time
}

// charge writes the decision's status with the budget's resourceVersion. On
// a conflict it re-reads the budget from the API server and decides again,
// refusing when the budget changed spec (or was re-created) meanwhile: the
// pod's domain was found under the spec it had.
func (h *EvictionHandler) charge(ctx context.Context, c *coveringBudget, podp **corev1.Pod, d budget.Decision, now time.Time) (budget.Decision, error) {
	if d.Status == nil || !d.Allowed {
		return d, nil
	}
	var stopped *budget.Decision
	recomputed := false
	written, err := h.status().Update(ctx, c.tdb, func(base *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
		// Decided again on every version written on: a newer one than
		// c.tdb (another writer's, or the live one after a conflict) has
		// other records and allowances.
		if base.Generation != c.tdb.Generation {
			return nil, errSpecChanged
		}
		fresh, end, err := h.recheckRecorded(ctx, base, *podp)
		if err != nil {
			return nil, err
		}
		if end != nil {
			stopped = end
			return nil, errStalePod
		}
		*podp = fresh
		req := budget.EvictionRequest{Pod: fresh, Domain: c.domain, Now: now, NodeGone: c.nodeGone}
		d, recomputed = h.refresh(ctx, base, budget.DecideEviction(base, req), req)
		if d.Status == nil || !d.Allowed {
			return nil, nil
		}
		base.Status = *d.Status
		return base, nil
	})
	switch {
	case errors.Is(err, errStalePod) && stopped != nil:
		return *stopped, nil
	case errors.Is(err, errSpecChanged) || errors.Is(err, budgetstatus.ErrGone):
		return staleDecision(c.tdb), nil
	case apierrors.IsConflict(err):
		return budget.Decision{Reason: budget.DecisionContended, Message: fmt.Sprintf(
			"topology disruption budget %s/%s: too many concurrent evictions; retry", c.tdb.Namespace, c.tdb.Name)}, nil
	case err != nil:
		return d, fmt.Errorf("recording the eviction in %s/%s: %w", c.tdb.Namespace, c.tdb.Name, err)
	}
	if written != nil {
		c.tdb = written
		if recomputed {
			countRecomputed(1)
		}
	}
	return d, nil
}

// errSpecChanged ends a charge whose budget changed spec between attempts.
var errSpecChanged = errors.New("the budget's spec changed")

// undo removes the records this request wrote, so that an eviction another
// budget refused is charged to none. Only records this request created are
// removed (same pod UID and grant time): a record another request granted
// for the same pod stays. The domain's allowance is not raised here: the
// status controller recomputes it from the pods (raising it is its job
// alone), so undoing errs on the side of allowing less for a moment. It runs
// until undoBy, whether or not the request's own deadline has passed (the
// request's may be what failed), and so still answers in time.
func (h *EvictionHandler) undo(ctx context.Context, undoBy time.Time, charged []charge, pod *corev1.Pod) error {
	if len(charged) == 0 {
		return nil
	}
	ctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), undoBy)
	defer cancel()
	var errs []error
	for _, c := range charged {
		key := client.ObjectKeyFromObject(c.budget.tdb)
		live, err := h.status().Reread(ctx, key, "")
		if err == nil {
			_, err = h.status().Update(ctx, live, func(base *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
				kept := base.Status.DisruptedPods[:0]
				removed := false
				for _, r := range base.Status.DisruptedPods {
					if r.Name == pod.Name && r.UID == pod.UID && r.Time.Time.Equal(metav1.NewTime(c.at).Rfc3339Copy().Time) {
						removed = true
						continue
					}
					kept = append(kept, r)
				}
				if !removed {
					return nil, nil
				}
				base.Status.DisruptedPods = kept
				return base, nil
			})
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
	}
	return errors.Join(errs...)
}
