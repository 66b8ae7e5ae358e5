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

// Package budget holds the pure decision logic of tdb-operator: which pods a
// TopologyDisruptionBudget covers, which failure domain each belongs to, how
// many pods each domain expects, how many may be disrupted, and whether one
// eviction may proceed. It imports no client and reads no clock: callers pass
// everything in, including the time.
package budget

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// AllDomain names the single domain of a budget without topologyKey.
const AllDomain = "all"

// DefaultRecordTimeout bounds how long an eviction record protects a pod that
// is still running and not being deleted: after it, the pod is read live and,
// if it is still running, not being deleted and the same pod, the record is
// taken for a phantom (something after the webhook refused the eviction) and
// dropped. Core deletes an evicted pod within about 10 s of admitting the
// eviction (its own PodDisruptionBudget retry loop is at most 10 s), so 20 s
// leaves a margin without holding a domain's allowance for long.
const DefaultRecordTimeout = 20 * time.Second

// MinRecordTimeout is the shortest record timeout the manager accepts: below
// it a record could be dropped while core is still deleting its pod.
const MinRecordTimeout = 15 * time.Second

// Owner is the scale-bearing controller of a group of pods, as resolved by the
// caller from a pod's controllerRef (a ReplicaSet owned by a Deployment
// resolves to the Deployment, as in the policy/v1 disruption controller).
type Owner struct {
	// UID identifies the scale-bearing controller.
	UID types.UID
	// Kind and Name are for messages.
	Kind, Name string
	// Replicas is the controller's desired scale.
	Replicas int32
	// OrdinalStart is set for an apps/v1 StatefulSet: its pods are named
	// <Name>-<ordinal>, ordinals from OrdinalStart (spec.ordinals.start)
	// to OrdinalStart+Replicas-1. Nil for any other controller, whose
	// pods' names say nothing of which are missing.
	OrdinalStart *int32
}

// Input is everything one status computation needs.
type Input struct {
	// Budget is the TDB: its namespace, spec and status.disruptedPods are read.
	Budget *policyv1alpha1.TopologyDisruptionBudget
	// Pods are candidate pods; those outside the budget's namespace or not
	// matching its selector are ignored.
	Pods []*corev1.Pod
	// Nodes finds a node by name; a nil result means the node is unknown.
	Nodes func(name string) *corev1.Node
	// Owners maps a controllerRef UID (of a pod, or of an eviction record) to
	// its scale-bearing controller. A missing entry means no scale is known.
	Owners map[types.UID]Owner
	// Controllers are the scale-bearing controllers whose pod template the
	// budget's selector matches, listed whether or not any of their pods
	// exists, so that a controller whose pods are all gone is not forgotten.
	Controllers []Owner
	// Now is the time of the computation.
	Now time.Time
	// RecordTimeout overrides DefaultRecordTimeout when positive.
	RecordTimeout time.Duration
	// RecordSeen holds when the computing process first saw each record. A
	// record's age is measured from it, on the clock of the process that
	// expires it, never from the grant time another replica's clock wrote;
	// a record missing from the map is first seen now. Nil: ages are
	// measured from the grant time (clamped to now).
	RecordSeen map[RecordKey]time.Time
	// ConfirmExpiry, when true, keeps a record past its timeout until the
	// caller has confirmed with a live read that its pod is still running,
	// not being deleted and the same pod (Phantoms); such records are
	// returned in Result.Unconfirmed. When false they are dropped at once.
	ConfirmExpiry bool
	// Phantoms are the records past their timeout whose pod the caller read
	// live and found running, not being deleting and the same pod.
	Phantoms map[RecordKey]bool
	// GoneConfirmed are the records whose pod the caller read live and
	// found gone (or replaced by another of the same name). With
	// ConfirmExpiry, a record whose pod is merely missing from the caller's
	// cache is not dropped until confirmed so (Result.UnconfirmedGone): the
	// webhook may have granted the eviction of a pod the cache has not seen
	// yet, which would otherwise count as healthy once it shows up.
	GoneConfirmed map[RecordKey]bool
	// GoneNodes, when set, returns the last labels of a node that was
	// deleted (false when the node is unknown): a pod bound to it runs
	// nowhere and counts as gone, in the domain it was in.
	GoneNodes func(name string) (map[string]string, bool)
	// Coverage is the budget's spec parsed (ParseCoverage of Budget); nil:
	// parsed here.
	Coverage *Coverage
}

// RecordKey identifies one grant: a record renewed by a later grant is a new
// one.
type RecordKey struct {
	Name string
	UID  types.UID
	// Unix is the grant time in seconds, as status keeps it.
	Unix int64
}

// KeyOf returns the key of a record.
func KeyOf(r policyv1alpha1.DisruptedPod) RecordKey {
	return RecordKey{Name: r.Name, UID: r.UID, Unix: r.Time.Unix()}
}

// RecordGone says whether a live read of a record's pod (nil: not found)
// shows it gone: no pod of its name, or another pod under it.
func RecordGone(r policyv1alpha1.DisruptedPod, pod *corev1.Pod) bool {
	return pod == nil || (r.UID != "" && pod.UID != r.UID)
}

// DomainIssue names a covered pod whose domain cannot be told.
type DomainIssue struct {
	Pod, Node, Reason string
}

// ExpiredRecord is an eviction record dropped because its pod kept running.
type ExpiredRecord struct {
	Pod  string
	Time time.Time
}

// Result is the computed status of one budget plus what the caller should
// report about it.
type Result struct {
	// Domains is one row per domain, sorted by name.
	Domains []policyv1alpha1.DomainStatus
	// ExpectedPods, CurrentHealthy and DisruptionsAllowed sum the domains.
	ExpectedPods, CurrentHealthy, DisruptionsAllowed int32
	// DisruptedPods are the eviction records still needed, sorted by name.
	DisruptedPods []policyv1alpha1.DisruptedPod
	// ExpiredRecords were dropped because their pod kept running.
	ExpiredRecords []ExpiredRecord
	// Unconfirmed are records past their timeout, kept until a live read of
	// their pod confirms it still runs (see Input.ConfirmExpiry).
	Unconfirmed []policyv1alpha1.DisruptedPod
	// UnconfirmedGone are records no longer needed whose pod is missing from
	// the cache, kept until a live read confirms it gone (see
	// Input.GoneConfirmed).
	UnconfirmedGone []policyv1alpha1.DisruptedPod
	// DomainIssues are covered pods whose node has no topologyKey label or
	// is unknown; while there are any, nothing is allowed.
	DomainIssues []DomainIssue
	// NoScale lists pods whose controller has no known scale; while there are
	// any, nothing is allowed (as policy/v1 does).
	NoScale []string
	// UnmanagedPods are covered pods without a controller; they count where
	// they run but nothing replaces them.
	UnmanagedPods []string
	// Err is set when the spec itself cannot be evaluated.
	Err error
	// RecheckAt, when set, is the earliest time a record expires: the status
	// must be computed again then even if nothing else changes.
	RecheckAt *time.Time
	// AvailableAt, when set, is when the next pod warming up under
	// minReadySeconds becomes available: the status must be computed again
	// then, as no event will say so.
	AvailableAt *time.Time
}

// Blocked says why nothing may be disrupted, or "" when the numbers stand.
func (r *Result) Blocked() (reason, message string) {
	switch {
	case r.Err != nil:
		return policyv1alpha1.ReasonSyncFailed, r.Err.Error()
	case len(r.DomainIssues) > 0 && r.DomainIssues[0].Node == "":
		i := r.DomainIssues[0]
		return policyv1alpha1.ReasonDomainError, fmt.Sprintf(
			"%d covered pod(s) have no partition, e.g. pod %s: %s; fix spec.partition or the pods",
			len(r.DomainIssues), i.Pod, i.Reason)
	case len(r.DomainIssues) > 0:
		i := r.DomainIssues[0]
		return policyv1alpha1.ReasonDomainError, fmt.Sprintf(
			"%d covered pod(s) have no domain, e.g. pod %s on node %q: %s; label the node or fix nodeSelectorTerm",
			len(r.DomainIssues), i.Pod, i.Node, i.Reason)
	case len(r.NoScale) > 0:
		return policyv1alpha1.ReasonSyncFailed, fmt.Sprintf(
			"%d covered pod(s) have a controller without a readable scale, e.g. pod %s; give the controller a scale subresource or use an integer minAvailable without topologyKey",
			len(r.NoScale), r.NoScale[0])
	}
	return "", ""
}

// Compute evaluates a budget over the given pods. It never fails: an input it
// cannot evaluate yields a Result that allows nothing and says why.
func Compute(in Input) Result {
	spec := &in.Budget.Spec
	if err := checkAmounts(spec); err != nil {
		return Result{Err: err}
	}
	parsed := in.Coverage
	if parsed == nil {
		parsed = ParseCoverage(in.Budget)
	}
	if err := parsed.Err(); err != nil {
		return Result{Err: err}
	}
	cov := parsed.evaluate(in.Budget, in.Nodes, in.GoneNodes)
	timeout := in.RecordTimeout
	if timeout <= 0 {
		timeout = DefaultRecordTimeout
	}

	placed := cov.place(in.Pods)
	var res Result
	res.DomainIssues = placed.issues
	res.UnmanagedPods = placed.unmanaged

	records := keepRecords(in.Budget.Status.DisruptedPods, placed.named(in.Budget.Status.DisruptedPods), expiryRule{
		now: in.Now, timeout: timeout, seen: in.RecordSeen, confirm: in.ConfirmExpiry, phantoms: in.Phantoms,
	})
	res.ExpiredRecords = records.expired
	res.Unconfirmed = records.unconfirmed
	res.RecheckAt = records.recheckAt

	scaleBased := usesScale(spec)
	counts := newDomainCounts(placed, !scaleBased)
	if spec.TopologyKey == "" && spec.Partition == nil {
		counts.ensure(AllDomain)
	}
	if scaleBased {
		att := attributeMissing(placed, records.gone, records.deleting, in.Owners, in.Controllers, parsed.domainSpec, parsed.partition)
		res.NoScale = att.noScale
		counts.addAttribution(att)
		records.keepGone(att.keptRecords)
	}
	// A record no longer needed whose pod the input does not show is held
	// until a live read confirms the pod gone: the webhook may have granted
	// the eviction of a pod the cache has not seen yet, which would count
	// healthy once it does.
	if in.ConfirmExpiry {
		res.UnconfirmedGone = records.holdUnconfirmedGone(in.GoneConfirmed)
		counts.addHeldOfNewerPods(res.UnconfirmedGone, placed.named(res.UnconfirmedGone), parsed.domainSpec)
	}
	// The next pod to become available under minReadySeconds raises its
	// domain's healthy count then, with no event to say so.
	res.AvailableAt = counts.countHealthy(placed, records.protecting(), parsed.minReady, in.Now)
	res.DisruptedPods = records.result()
	res.allow(spec, counts)
	return res
}

// addHeldOfNewerPods counts the held records whose name another pod holds
// in the input (named): such a record may be of a newer pod than that one
// (a StatefulSet replacement the webhook read live, the cache still
// showing its predecessor). Until a live read confirms it gone, it is one
// more expected pod of its domain (of every domain, for a record of
// another spec), not healthy. The predecessor still counts where it runs:
// the double count allows less, never more.
func (dc *domainCounts) addHeldOfNewerPods(held []policyv1alpha1.DisruptedPod, named map[string]*placedPod, domainSpec string) {
	for _, r := range held {
		if pp, ok := named[r.Name]; ok && pp.pod.UID != r.UID && r.Domain != "" {
			if recordOfSpec(r, domainSpec) {
				dc.expected[r.Domain]++
			} else {
				dc.addEveryDomain(1)
			}
		}
	}
}

// allow sets the domains and their allowances from the counts (none while
// the budget is blocked), and the totals.
func (r *Result) allow(spec *policyv1alpha1.TopologyDisruptionBudgetSpec, counts *domainCounts) {
	r.Domains = allowances(spec, counts.rows())
	if reason, _ := r.Blocked(); reason != "" {
		for i := range r.Domains {
			r.Domains[i].DisruptionsAllowed = 0
		}
	}
	// Messages name the first issue: sort, so the same pods give the same
	// message whatever order the cache listed them in.
	sort.Slice(r.DomainIssues, func(i, j int) bool { return r.DomainIssues[i].Pod < r.DomainIssues[j].Pod })
	sort.Strings(r.NoScale)
	sort.Strings(r.UnmanagedPods)
	for _, d := range r.Domains {
		r.ExpectedPods += d.ExpectedPods
		r.CurrentHealthy += d.CurrentHealthy
	}
	r.DisruptionsAllowed = AllowedTogether(spec, r.Domains)
}

// usesScale says whether expected pods come from the owners' scales. As in
// policy/v1, an integer minAvailable without topology counts the pods that
// exist; every per-domain budget needs scales so that missing pods are seen.
func usesScale(spec *policyv1alpha1.TopologyDisruptionBudgetSpec) bool {
	if spec.TopologyKey != "" || spec.Partition != nil || spec.MaxUnavailable != nil {
		return true
	}
	return spec.MinAvailable != nil && spec.MinAvailable.Type == intstr.String
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
