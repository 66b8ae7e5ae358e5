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

// Package snapshot is the one way in for cluster state: what the informer
// caches keep (cache.go: CacheOptions strips every object to what budgets
// read), the cache indexes (indexes.go), the one registry of workload kinds
// (workloads.go: a pod's scale-bearing owner, "a ReplicaSet of a Deployment
// counts as the Deployment", a DaemonSet's scale), owner resolution
// (owners.go), and per budget (this file) the pods its selector matches,
// their nodes under one node-error policy, and the budget's parsed coverage,
// kept until its generation changes. The status, rollout and deletion-cost
// controllers and the eviction webhook read through it; what they decide
// from it is internal/budget's.
package snapshot

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/tombstone"
)

// Gatherer reads budgets' inputs from the caches. Safe for concurrent use;
// share one per process.
type Gatherer struct {
	// Cache is the manager's cache.
	Cache client.Reader
	// Live, when set, is read for a node the cache does not know: a node
	// newer than the cache (the webhook decides on it at once).
	Live client.Reader
	// GoneNodes remembers the last labels of deleted nodes (nil: none).
	GoneNodes *tombstone.Nodes
	// Scales reads the scale subresource of custom controllers (a live
	// read: they are not cached); nil: their pods have no known scale.
	Scales client.Client

	// podsByLabel says that Cache has LabelIndex (IndexPodsByLabel); a
	// reader without it (a test's fake client) is read namespace-wide.
	podsByLabel bool
	coverages   coverages
}

// Coverage returns the budget's parsed spec, parsed again only when its
// generation (or UID) changes.
func (g *Gatherer) Coverage(tdb *policyv1alpha1.TopologyDisruptionBudget) *budget.Coverage {
	return g.coverages.of(tdb, time.Now())
}

// BudgetsSelecting lists the budgets of ns that might cover a pod with
// these labels: those whose selector matches, and those whose selector does
// not parse unless it clearly rules the labels out (they must say they are
// broken, and refuse what they might cover). The items are the cache's own:
// callers must not modify them.
func (g *Gatherer) BudgetsSelecting(ctx context.Context, ns string, set labels.Set) ([]*policyv1alpha1.TopologyDisruptionBudget, error) {
	var list policyv1alpha1.TopologyDisruptionBudgetList
	if err := g.Cache.List(ctx, &list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing budgets in %s: %w", ns, err)
	}
	var out []*policyv1alpha1.TopologyDisruptionBudget
	for i := range list.Items {
		t := &list.Items[i]
		if g.Coverage(t).MightSelect(ns, set) {
			out = append(out, t)
		}
	}
	return out, nil
}

// Nodes is a node lookup for one pass, with the one node-error policy: a
// node the cache (and Live, when set) does not know is gone (nil); any
// other read error is kept, the pass must not decide on it, and Err
// returns the first. Lookups are memoised; not safe for concurrent use.
// The nodes share their labels with the cache's objects: callers must not
// modify them.
type Nodes struct {
	ctx   context.Context
	g     *Gatherer
	seen  map[string]*corev1.Node
	first error
}

// Nodes starts a node lookup for one pass.
func (g *Gatherer) Nodes(ctx context.Context) *Nodes {
	return &Nodes{ctx: ctx, g: g, seen: map[string]*corev1.Node{}}
}

// Get returns the named node, nil when it is gone or could not be read.
func (n *Nodes) Get(name string) *corev1.Node {
	if node, ok := n.seen[name]; ok {
		return node
	}
	var node corev1.Node
	// A pass reads a node's name and labels only: copying each node's
	// labels out of the cache cost a tenth of the status controller's time
	// in a drain of a large cluster.
	err := n.g.Cache.Get(n.ctx, client.ObjectKey{Name: name}, &node, client.UnsafeDisableDeepCopy)
	if apierrors.IsNotFound(err) && n.g.Live != nil {
		err = n.g.Live.Get(n.ctx, client.ObjectKey{Name: name}, &node)
	}
	if err != nil {
		if !apierrors.IsNotFound(err) && n.first == nil {
			n.first = fmt.Errorf("reading node %s: %w", name, err)
		}
		n.seen[name] = nil
		return nil
	}
	n.seen[name] = &node
	return &node
}

// Err is the first read error other than not found.
func (n *Nodes) Err() error { return n.first }

// Snapshot is one budget as the caches show it now.
type Snapshot struct {
	// Budget is the budget the snapshot was taken of.
	Budget *policyv1alpha1.TopologyDisruptionBudget
	// Coverage is its parsed spec; Coverage.Err says why it cannot be
	// evaluated (then Pods is empty).
	Coverage *budget.Coverage
	// Pods are the pods of its namespace its selector matches, the cache's
	// own objects: callers must not modify them.
	Pods []*corev1.Pod
	// Nodes looks their nodes up.
	Nodes *Nodes

	gone func(string) (map[string]string, bool)
}

// Snapshot gathers the budget's pods. An error means the cache could not be
// read; a spec that cannot be evaluated is in Coverage.Err.
func (g *Gatherer) Snapshot(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget) (*Snapshot, error) {
	s := &Snapshot{Budget: tdb, Coverage: g.Coverage(tdb), Nodes: g.Nodes(ctx), gone: g.GoneNodes.Labels}
	if s.Coverage.Err() != nil {
		return s, nil
	}
	sel := s.Coverage.Selector()
	opts := []client.ListOption{client.InNamespace(tdb.Namespace), client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy}
	if g.podsByLabel {
		// Scanning the namespace's every pod against the selector was a
		// quarter of the status controller's time in a drain of a large
		// cluster: read only the pods bearing one label the selector
		// requires, the cache filters them by the whole selector.
		if key, ok := requiredLabel(sel); ok {
			opts = append(opts, client.MatchingFields{LabelIndex: key})
		}
	}
	var pods corev1.PodList
	if err := g.Cache.List(ctx, &pods, opts...); err != nil {
		return nil, fmt.Errorf("listing pods of %s/%s: %w", tdb.Namespace, tdb.Name, err)
	}
	s.Pods = make([]*corev1.Pod, len(pods.Items))
	for i := range pods.Items {
		s.Pods[i] = &pods.Items[i]
	}
	return s, nil
}

// requiredLabel returns, as a key of LabelIndex, a label every pod sel
// matches bears: that of sel's first requirement (by label name) of one
// value under =, == or in. ok is false when sel requires no such label
// (no requirement, or only notin, exists, !, or in with several values).
func requiredLabel(sel labels.Selector) (key string, ok bool) {
	reqs, selectable := sel.Requirements()
	if !selectable {
		return "", false
	}
	for _, r := range reqs {
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			if values := r.ValuesUnsorted(); len(values) == 1 {
				return labelIndexKey(r.Key(), values[0]), true
			}
		}
	}
	return "", false
}

// Fingerprint sums up, in one number, what a budget's status reads of its
// pods: which pods (name, UID, labels, owners), where (node) and how they
// are (phase, readiness, deletion). Two snapshots with the same fingerprint
// give the same status; a change in any of these fields, and only in them,
// is also what sends the status controller a pod event. A pass's consumer
// compares it to its own snapshot's to tell whether the status it reads was
// made from the pods it sees.
//
// It is computed on every pass, so it allocates nothing: each pod is
// hashed on its own and the pods' hashes are added up, which needs no
// sorting (the sum does not depend on their order, and a namespace holds
// no two pods of one name); a pod's labels are summed likewise. The value
// is only compared within one process, never stored.
func (s *Snapshot) Fingerprint() uint64 {
	sum := uint64(len(s.Pods))
	for _, p := range s.Pods {
		sum += mix(podFingerprint(p))
	}
	return mix(sum)
}

// podFingerprint hashes what Fingerprint covers of one pod.
func podFingerprint(p *corev1.Pod) uint64 {
	h := hashField(fnvOffset, p.Name)
	h = hashField(h, string(p.UID))
	h = hashField(h, p.Spec.NodeName)
	h = hashField(h, string(p.Status.Phase))
	h = hashField(h, string(podReady(p)))
	h = hashField(h, strconv.FormatBool(p.DeletionTimestamp != nil))
	labels := uint64(len(p.Labels))
	for k, v := range p.Labels {
		labels += mix(hashField(hashField(fnvOffset, k), v))
	}
	h = hashUint(h, labels)
	for _, r := range p.OwnerReferences {
		h = hashField(h, string(r.UID))
		h = hashField(h, strconv.FormatBool(r.Controller != nil && *r.Controller))
	}
	return h
}

// FNV-1a, 64 bits (hash/fnv), inlined: the hash.Hash interface makes every
// string written a []byte on the heap.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// hashField adds v and a terminating NUL, which no name, label or UID
// holds, so that consecutive fields cannot run into each other.
func hashField(h uint64, v string) uint64 {
	for i := 0; i < len(v); i++ {
		h = (h ^ uint64(v[i])) * fnvPrime
	}
	// The NUL: h ^ 0 is h.
	return h * fnvPrime
}

// hashUint adds the 8 bytes of v.
func hashUint(h uint64, v uint64) uint64 {
	for i := 0; i < 8; i++ {
		h = (h ^ (v & 0xff)) * fnvPrime
		v >>= 8
	}
	return h
}

// mix is SplitMix64's finaliser, a bijection that spreads every input bit
// over the output: FNV-1a's values are not uniform enough for their sum
// to keep their distinctness.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func podReady(p *corev1.Pod) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

// Place tells whether the budget covers the pod and in which domain, with
// the snapshot's node lookup and the last labels of gone nodes.
func (s *Snapshot) Place(pod *corev1.Pod) (budget.Placement, error) {
	return s.Coverage.Place(s.Budget, pod, s.Nodes.Get, s.gone)
}

// GoneNodes returns the last labels of a deleted node (nil func: none).
func (s *Snapshot) GoneNodes() func(string) (map[string]string, bool) { return s.gone }

// coverages caches parsed coverages by budget UID and generation. Entries
// unused for idle are dropped.
type coverages struct {
	mu        sync.Mutex
	m         map[types.UID]*parsed
	lastSweep time.Time
}

type parsed struct {
	generation int64
	cov        *budget.Coverage
	used       time.Time
}

// idle is how long an unused coverage is kept (a deleted budget's).
const idle = 10 * time.Minute

func (c *coverages) of(tdb *policyv1alpha1.TopologyDisruptionBudget, now time.Time) *budget.Coverage {
	if tdb.UID == "" {
		// Not from the API server (a test's object): nothing to key on.
		return budget.ParseCoverage(tdb)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Sub(c.lastSweep) >= idle {
		c.lastSweep = now
		for uid, p := range c.m {
			if now.Sub(p.used) >= idle {
				delete(c.m, uid)
			}
		}
	}
	if c.m == nil {
		c.m = map[types.UID]*parsed{}
	}
	p := c.m[tdb.UID]
	if p == nil || p.generation != tdb.Generation || tdb.Generation == 0 {
		p = &parsed{generation: tdb.Generation, cov: budget.ParseCoverage(tdb)}
		c.m[tdb.UID] = p
	}
	p.used = now
	return p.cov
}
