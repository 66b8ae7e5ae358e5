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

package budget

import (
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// A record (an entry of status.disruptedPods) has two jobs. While its pod
// still runs, it keeps the pod from counting as healthy: the eviction was
// granted and the pod is about to go. Once the pod is gone, it tells which
// domain the owner's missing pod belongs to, until the owner has a
// replacement scheduled. A record whose pod keeps running and is not deleted
// past the record timeout is a phantom (a later admission step or a
// policy/v1 PDB refused the eviction) and is dropped.

// recordSet sorts the records of a budget by what their pod is doing.
type recordSet struct {
	// running records protect a pod that runs and is not being deleted.
	running []policyv1alpha1.DisruptedPod
	// deleting records wait for their pod to go.
	deleting []policyv1alpha1.DisruptedPod
	// gone records' pods no longer exist (or are terminal); whether they are
	// kept is decided by missing-pod attribution.
	gone []policyv1alpha1.DisruptedPod
	// keptGone are the gone records still explaining a missing pod.
	keptGone []policyv1alpha1.DisruptedPod

	expired     []ExpiredRecord
	unconfirmed []policyv1alpha1.DisruptedPod
	recheckAt   *time.Time
}

// expiryRule says when a record of a running pod expires.
type expiryRule struct {
	now     time.Time
	timeout time.Duration
	// seen: first-seen times (nil: the grant time, clamped to now).
	seen     map[RecordKey]time.Time
	confirm  bool
	phantoms map[RecordKey]bool
}

// since is when the record's age started: when this process first saw it,
// or its grant time when no first-seen times are kept; never in the future,
// so a record written by a replica whose clock runs ahead does not live
// longer than the timeout, nor one whose clock lags die at once.
func (e expiryRule) since(r policyv1alpha1.DisruptedPod) time.Time {
	t := r.Time.Time
	if e.seen != nil {
		t = e.now
		if s, ok := e.seen[KeyOf(r)]; ok {
			t = s
		}
	}
	if t.After(e.now) {
		return e.now
	}
	return t
}

// keepRecords classifies records against the pods that exist now.
func keepRecords(records []policyv1alpha1.DisruptedPod, pods map[string]*placedPod, rule expiryRule) *recordSet {
	rs := &recordSet{}
	now := rule.now
	for _, r := range records {
		pp, ok := pods[r.Name]
		if !ok || (r.UID != "" && pp.pod.UID != r.UID) {
			rs.gone = append(rs.gone, r)
			continue
		}
		if pp.pod.DeletionTimestamp != nil || pp.kind == nodeGone {
			rs.deleting = append(rs.deleting, r)
			continue
		}
		expiry := rule.since(r).Add(rule.timeout)
		if !now.Before(expiry) {
			if !rule.confirm || rule.phantoms[KeyOf(r)] {
				rs.expired = append(rs.expired, ExpiredRecord{Pod: r.Name, Time: r.Time.Time})
				continue
			}
			// Past its time, but only a live read of the pod may drop it:
			// a lagging cache would turn that into an over-eviction.
			rs.unconfirmed = append(rs.unconfirmed, r)
			expiry = now.Add(time.Second)
		}
		if rs.recheckAt == nil || expiry.Before(*rs.recheckAt) {
			rs.recheckAt = &expiry
		}
		rs.running = append(rs.running, r)
	}
	return rs
}

// keepGone sets which gone records are still needed.
func (rs *recordSet) keepGone(kept []policyv1alpha1.DisruptedPod) { rs.keptGone = kept }

// holdUnconfirmedGone keeps the gone records that would be dropped but are
// not confirmed gone, and returns them. They change no number: their pod is
// not in the input.
func (rs *recordSet) holdUnconfirmedGone(confirmed map[RecordKey]bool) []policyv1alpha1.DisruptedPod {
	kept := make(map[RecordKey]bool, len(rs.keptGone))
	for _, r := range rs.keptGone {
		kept[KeyOf(r)] = true
	}
	var held []policyv1alpha1.DisruptedPod
	for _, r := range rs.gone {
		if k := KeyOf(r); !kept[k] && !confirmed[k] {
			held = append(held, r)
		}
	}
	rs.keptGone = append(rs.keptGone, held...)
	return held
}

// protecting returns, by pod name, the UID of every pod that a record keeps
// from counting as healthy ("" when the record has no UID).
func (rs *recordSet) protecting() map[string]types.UID {
	out := make(map[string]types.UID, len(rs.running))
	for _, r := range rs.running {
		out[r.Name] = r.UID
	}
	return out
}

// result returns the records to keep in status, sorted by pod name.
func (rs *recordSet) result() []policyv1alpha1.DisruptedPod {
	n := len(rs.running) + len(rs.deleting) + len(rs.keptGone)
	if n == 0 {
		return nil
	}
	out := make([]policyv1alpha1.DisruptedPod, 0, n)
	out = append(out, rs.running...)
	out = append(out, rs.deleting...)
	out = append(out, rs.keptGone...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
