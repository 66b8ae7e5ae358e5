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
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// placeKind says where a selected pod stands with respect to the budget.
type placeKind int

const (
	// inDomain: the pod runs on a covered node whose domain is known.
	inDomain placeKind = iota
	// uncovered: the pod runs on a node outside nodeSelectorTerm.
	uncovered
	// unscheduled: the pod has no node yet; its owner counts it missing.
	unscheduled
	// noDomain: the pod's node exists but lacks the topologyKey label.
	noDomain
	// nodeGone: the pod's node object is gone (or was never seen): the pod
	// runs nowhere and counts as gone, in the domain it was in when that
	// is known (domain "" when not).
	nodeGone
)

// placedPod is a selected, non-terminal pod and where it stands.
type placedPod struct {
	pod    *corev1.Pod
	kind   placeKind
	domain string
	// controller is the UID of the pod's controllerRef, "" when it has none.
	controller types.UID
}

// placement is the result of placing every selected pod.
type placement struct {
	pods      []placedPod
	issues    []DomainIssue
	unmanaged []string
}

// Coverage is a budget's spec parsed once: the pods it covers (namespace
// and selector), the nodes (nodeSelectorTerm) and how domains are named
// (topologyKey). It depends on the spec alone, so a caller may keep it for
// as long as the budget's generation does not change (see
// internal/snapshot). It is never modified: safe for concurrent use.
type Coverage struct {
	namespace string
	selector  labels.Selector
	// raw is the selector as written, read when it does not parse.
	raw *metav1.LabelSelector
	// nodeFilter holds nodeSelectorTerm.matchExpressions, nameFilters its
	// matchFields; a node is covered when it matches both.
	nodeFilter  *nodeaffinity.NodeSelector
	nameFilters []nameFilter
	topologyKey string
	// partition, when set, reads each pod's domain from the pod itself.
	partition *partitionSource
	// minReady is spec.minReadySeconds.
	minReady time.Duration
	// domainSpec is DomainSpecOf the spec: records of another tell no
	// domain.
	domainSpec string
	// err says why the spec cannot be evaluated (nil when it can);
	// selectorErr why its selector alone cannot.
	err, selectorErr error
}

// coverage evaluates a Coverage against the nodes and records of one
// computation.
type coverage struct {
	*Coverage
	nodes func(string) *corev1.Node
	// goneNodes returns the last labels of a deleted node (nil: none known).
	goneNodes func(string) (map[string]string, bool)
	// records are the budget's eviction records: they tell the domain of a
	// pod whose node is gone.
	records []policyv1alpha1.DisruptedPod
	// nodeCache memoises a node's placement; many pods share a node.
	nodeCache map[string]nodePlace
}

type nodePlace struct {
	kind   placeKind
	domain string
	reason string
}

// ParseCoverage parses the budget's spec. A spec that cannot be evaluated
// (the API server should have refused it) yields a Coverage whose Err says
// why: it covers only the pods its selector, read as written, might select
// (see Place).
func ParseCoverage(tdb *policyv1alpha1.TopologyDisruptionBudget) *Coverage {
	cv, err := parseCoverage(tdb)
	if err != nil {
		cv = &Coverage{namespace: tdb.Namespace, err: err}
		if tdb.Spec.Selector != nil {
			cv.raw = tdb.Spec.Selector.AsMeta()
			if _, serr := metav1.LabelSelectorAsSelector(cv.raw); serr != nil {
				cv.selectorErr = fmt.Errorf("parsing spec.selector: %w", serr)
			}
		}
	}
	return cv
}

// SelectorErr says why the budget's selector, on its own, does not parse;
// nil when it does (another part of the spec may still be broken: Err).
func (cv *Coverage) SelectorErr() error { return cv.selectorErr }

// Err says why the budget's spec cannot be evaluated; nil when it can.
func (cv *Coverage) Err() error { return cv.err }

// Selector is the budget's parsed selector; nil when Err is not nil.
func (cv *Coverage) Selector() labels.Selector { return cv.selector }

// MightSelect says whether the budget may cover a pod with these labels in
// its namespace: its selector matches them or, for a selector that does not
// parse, none of its requirements clearly rules them out.
func (cv *Coverage) MightSelect(namespace string, set map[string]string) bool {
	if namespace != cv.namespace {
		return false
	}
	if cv.err != nil {
		return cv.raw != nil && mightSelect(cv.raw, set)
	}
	return cv.selector.Matches(labels.Set(set))
}

func parseCoverage(tdb *policyv1alpha1.TopologyDisruptionBudget) (*Coverage, error) {
	spec := &tdb.Spec
	if spec.Selector == nil {
		return nil, fmt.Errorf("spec.selector is required")
	}
	sel, err := metav1.LabelSelectorAsSelector(spec.Selector.AsMeta())
	if err != nil {
		return nil, fmt.Errorf("parsing spec.selector: %w", err)
	}
	c := &Coverage{
		namespace:   tdb.Namespace,
		selector:    sel,
		topologyKey: spec.TopologyKey,
		domainSpec:  DomainSpecOf(spec),
		minReady:    time.Duration(spec.MinReadySeconds) * time.Second,
	}
	if spec.Partition != nil {
		if spec.TopologyKey != "" || spec.NodeSelectorTerm != nil {
			return nil, fmt.Errorf("spec.partition excludes spec.topologyKey and spec.nodeSelectorTerm: a budget takes its domains from one source")
		}
		ps, err := parsePartition(spec.Partition)
		if err != nil {
			return nil, err
		}
		c.partition = ps
	}
	// An empty term would match no node in core/v1; here it means no
	// restriction, so only a non-empty term becomes a filter.
	if t := spec.NodeSelectorTerm; t != nil && len(t.MatchExpressions) > 0 {
		exprs := policyv1alpha1.NodeSelectorTerm{MatchExpressions: t.MatchExpressions}
		ns, err := nodeaffinity.NewNodeSelector(&corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{exprs.ToCore()}})
		if err != nil {
			return nil, fmt.Errorf("parsing spec.nodeSelectorTerm: %w", err)
		}
		c.nodeFilter = ns
	}
	if t := spec.NodeSelectorTerm; t != nil {
		for i, f := range t.MatchFields {
			nf, err := newNameFilter(f)
			if err != nil {
				return nil, fmt.Errorf("parsing spec.nodeSelectorTerm.matchFields[%d]: %w", i, err)
			}
			c.nameFilters = append(c.nameFilters, nf)
		}
	}
	return c, nil
}

// evaluate returns the coverage evaluated with the nodes and, for pods on
// gone nodes, the budget's records and the last labels of gone nodes.
func (cv *Coverage) evaluate(tdb *policyv1alpha1.TopologyDisruptionBudget, nodes func(string) *corev1.Node, gone func(string) (map[string]string, bool)) *coverage {
	if nodes == nil {
		nodes = func(string) *corev1.Node { return nil }
	}
	return &coverage{Coverage: cv, nodes: nodes, goneNodes: gone, records: tdb.Status.DisruptedPods, nodeCache: map[string]nodePlace{}}
}

// singleDomain says whether every selected pod is in the one domain "all"
// whatever its node: no topologyKey and no nodeSelectorTerm, exactly the
// situation of a policy/v1 PodDisruptionBudget.
func (c *coverage) singleDomain() bool {
	return c.topologyKey == "" && c.nodeFilter == nil && len(c.nameFilters) == 0 && c.partition == nil
}

// nameFilter is one matchFields requirement on metadata.name. core/v1's
// nodeaffinity accepts a single name per requirement; the API admits a list
// (In: any of the names, NotIn: none of them), so names are matched here.
type nameFilter struct {
	in    bool
	names map[string]bool
}

func newNameFilter(f policyv1alpha1.NodeFieldSelectorRequirement) (nameFilter, error) {
	if f.Key != "metadata.name" {
		return nameFilter{}, fmt.Errorf("key %q is not supported, only metadata.name", f.Key)
	}
	if f.Operator != "In" && f.Operator != "NotIn" {
		return nameFilter{}, fmt.Errorf("operator %q is not supported, only In and NotIn", f.Operator)
	}
	if len(f.Values) == 0 {
		return nameFilter{}, fmt.Errorf("values must not be empty")
	}
	nf := nameFilter{in: f.Operator == "In", names: make(map[string]bool, len(f.Values))}
	for _, v := range f.Values {
		nf.names[v] = true
	}
	return nf, nil
}

// coversNode says whether the node matches nodeSelectorTerm.
func (c *coverage) coversNode(node *corev1.Node) bool {
	if c.nodeFilter != nil && !c.nodeFilter.Match(node) {
		return false
	}
	for _, f := range c.nameFilters {
		if f.names[node.Name] != f.in {
			return false
		}
	}
	return true
}

// selects says whether the budget's namespace and selector pick the pod.
func (c *coverage) selects(pod *corev1.Pod) bool {
	return pod.Namespace == c.namespace && c.selector.Matches(labels.Set(pod.Labels))
}

// placeOnNode tells where a pod on the named node stands.
func (c *coverage) placeOnNode(nodeName string) nodePlace {
	if c.singleDomain() {
		return nodePlace{kind: inDomain, domain: AllDomain}
	}
	if p, ok := c.nodeCache[nodeName]; ok {
		return p
	}
	p := c.evaluateNode(nodeName)
	c.nodeCache[nodeName] = p
	return p
}

func (c *coverage) evaluateNode(nodeName string) nodePlace {
	node := c.nodes(nodeName)
	if node == nil {
		// The node is gone (autoscaler scale-down, node replacement) or
		// not seen: its pods run nowhere. Its last labels, when known, tell
		// whether it was covered and in which domain.
		if c.goneNodes != nil {
			if last, ok := c.goneNodes(nodeName); ok {
				n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: last}}
				if !c.coversNode(n) {
					return nodePlace{kind: uncovered}
				}
				if c.topologyKey == "" {
					return nodePlace{kind: nodeGone, domain: AllDomain}
				}
				return nodePlace{kind: nodeGone, domain: last[c.topologyKey]}
			}
		}
		if c.topologyKey == "" {
			return nodePlace{kind: nodeGone, domain: AllDomain}
		}
		return nodePlace{kind: nodeGone}
	}
	if !c.coversNode(node) {
		return nodePlace{kind: uncovered}
	}
	if c.topologyKey == "" {
		return nodePlace{kind: inDomain, domain: AllDomain}
	}
	domain, ok := node.Labels[c.topologyKey]
	if !ok {
		return nodePlace{kind: noDomain, reason: fmt.Sprintf("node has no label %s", c.topologyKey)}
	}
	return nodePlace{kind: inDomain, domain: domain}
}

// place classifies every selected, non-terminal pod.
func (c *coverage) place(pods []*corev1.Pod) placement {
	out := placement{pods: make([]placedPod, 0, len(pods))}
	for _, pod := range pods {
		if !c.selects(pod) || isTerminal(pod) {
			continue
		}
		pp := placedPod{pod: pod, kind: unscheduled}
		// NoCopy: only the UID is read, and copying costs two allocations
		// per pod.
		if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
			pp.controller = ref.UID
		}
		if c.partition != nil {
			pp.kind, pp.domain = c.placePartition(pod)
			if pp.kind == noDomain {
				out.issues = append(out.issues, DomainIssue{Pod: pod.Name, Reason: c.partition.missing()})
			}
		} else if pod.Spec.NodeName != "" || c.singleDomain() {
			np := c.placeOnNode(pod.Spec.NodeName)
			pp.kind, pp.domain = np.kind, np.domain
			switch np.kind {
			case noDomain:
				out.issues = append(out.issues, DomainIssue{Pod: pod.Name, Node: pod.Spec.NodeName, Reason: np.reason})
			case nodeGone:
				pp.domain = c.goneDomain(pod, np.domain)
			}
		}
		if pp.controller == "" && pp.kind == inDomain {
			out.unmanaged = append(out.unmanaged, pod.Name)
		}
		out.pods = append(out.pods, pp)
	}
	return out
}

// recordOfPod says whether r is the eviction record of pod. A record
// without UID (written before records carried one, or by hand) is the
// pod's only if it was granted no earlier than the pod was created (to the
// second, as both times are kept): an older one is a predecessor's of the
// same name (a StatefulSet's).
func recordOfPod(r policyv1alpha1.DisruptedPod, pod *corev1.Pod) bool {
	if r.Name != pod.Name {
		return false
	}
	if r.UID != "" {
		return r.UID == pod.UID
	}
	return !r.Time.Time.Before(pod.CreationTimestamp.Truncate(time.Second))
}

// podTopologyLabels are the node labels the API server copies onto bound
// pods (PodTopologyLabels): for them a pod tells its own domain.
var podTopologyLabels = map[string]bool{corev1.LabelTopologyZone: true, corev1.LabelTopologyRegion: true}

// goneDomain is the domain of a pod whose node is gone: its eviction
// record's (of the current spec), else its own topology label's, else the
// node's last label (lastLabel), else "" (unknown: its controller's missing
// pod then counts against every domain).
func (c *coverage) goneDomain(pod *corev1.Pod, lastLabel string) string {
	for _, r := range c.records {
		if recordOfPod(r, pod) && r.Domain != "" && recordOfSpec(r, c.domainSpec) {
			return r.Domain
		}
	}
	if podTopologyLabels[c.topologyKey] {
		if d := pod.Labels[c.topologyKey]; d != "" {
			return d
		}
	}
	return lastLabel
}

// named returns, by name, the placed pods that the records name. Only the
// few recorded names are indexed, not every pod.
func (p *placement) named(records []policyv1alpha1.DisruptedPod) map[string]*placedPod {
	out := make(map[string]*placedPod, len(records))
	if len(records) == 0 {
		return out
	}
	recorded := make(map[string]bool, len(records))
	for _, r := range records {
		recorded[r.Name] = true
	}
	for i := range p.pods {
		if name := p.pods[i].pod.Name; recorded[name] {
			out[name] = &p.pods[i]
		}
	}
	return out
}

// DomainOf tells whether the budget covers the pod and, if so, its domain.
// A covered pod whose domain cannot be told yields an error; an unscheduled
// pod is covered with domain "".
//
// A spec that cannot be evaluated (the API server should have refused it)
// covers only the pods it could select: a pod that its selector, read as
// written, clearly does not select is not covered, as policy/v1 ignores a
// PDB whose selector does not parse; any other pod of its namespace is
// covered with the error, so that the budget refuses it rather than let it
// go unchecked.
func DomainOf(tdb *policyv1alpha1.TopologyDisruptionBudget, pod *corev1.Pod, nodes func(string) *corev1.Node) (covered bool, domain string, err error) {
	return Locate(tdb, pod, nodes, nil)
}

// Locate is DomainOf for a caller that also knows the last labels of
// deleted nodes (gone): a pod on a node that is gone is covered in the
// domain it was in (see goneDomain), and covered with domain "" and
// ErrNodeGone when that cannot be told.
func Locate(tdb *policyv1alpha1.TopologyDisruptionBudget, pod *corev1.Pod, nodes func(string) *corev1.Node, gone func(string) (map[string]string, bool)) (covered bool, domain string, err error) {
	p, err := Place(tdb, pod, nodes, gone)
	return p.Covered, p.Domain, err
}

// Placement is where a budget finds a pod.
type Placement struct {
	// Covered says the budget covers the pod.
	Covered bool
	// Domain is the pod's domain ("" for an unscheduled pod, or when an
	// error is returned).
	Domain string
	// NodeGone says the pod's node is gone: the budget does not count the
	// pod healthy (see EvictionRequest.NodeGone). A budget with neither
	// topologyKey nor nodeSelectorTerm reads no node, as policy/v1.
	NodeGone bool
}

// Place is Locate with whether the budget counts the pod's node as gone.
func Place(tdb *policyv1alpha1.TopologyDisruptionBudget, pod *corev1.Pod, nodes func(string) *corev1.Node, gone func(string) (map[string]string, bool)) (Placement, error) {
	return ParseCoverage(tdb).Place(tdb, pod, nodes, gone)
}

// Place is the package's Place with the spec already parsed: cv must be
// ParseCoverage of tdb's spec (tdb's records are read for pods on gone
// nodes).
func (cv *Coverage) Place(tdb *policyv1alpha1.TopologyDisruptionBudget, pod *corev1.Pod, nodes func(string) *corev1.Node, gone func(string) (map[string]string, bool)) (Placement, error) {
	if pod.Namespace != cv.namespace {
		return Placement{}, nil
	}
	if cv.err != nil {
		// err says the budget is broken; covered says whether that is the
		// pod's concern.
		if !cv.MightSelect(pod.Namespace, pod.Labels) {
			return Placement{}, cv.err
		}
		return Placement{Covered: true}, cv.err
	}
	c := cv.evaluate(tdb, nodes, gone)
	if !c.selects(pod) {
		return Placement{}, nil
	}
	if c.partition != nil {
		switch kind, domain := c.placePartition(pod); kind {
		case noDomain:
			return Placement{Covered: true}, &noPartitionError{fmt.Sprintf("pod %s/%s: %s", pod.Namespace, pod.Name, c.partition.missing())}
		case nodeGone:
			return Placement{Covered: true, Domain: domain, NodeGone: true}, nil
		default:
			return Placement{Covered: true, Domain: domain}, nil
		}
	}
	if pod.Spec.NodeName == "" && !c.singleDomain() {
		return Placement{Covered: true}, nil
	}
	p := c.placeOnNode(pod.Spec.NodeName)
	switch p.kind {
	case uncovered:
		return Placement{}, nil
	case noDomain:
		return Placement{Covered: true}, &noLabelError{fmt.Sprintf("pod %s/%s on node %q: %s", pod.Namespace, pod.Name, pod.Spec.NodeName, p.reason)}
	case nodeGone:
		if d := c.goneDomain(pod, p.domain); d != "" {
			return Placement{Covered: true, Domain: d, NodeGone: true}, nil
		}
		return Placement{Covered: true, NodeGone: true}, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, ErrNodeGone)
	}
	return Placement{Covered: true, Domain: p.domain}, nil
}

// ErrNoDomainLabel says a pod's node exists but lacks the topologyKey label.
var ErrNoDomainLabel = errors.New("the node has no topologyKey label")

// noLabelError is an ErrNoDomainLabel that names the pod and node.
type noLabelError struct{ msg string }

func (e *noLabelError) Error() string        { return e.msg }
func (e *noLabelError) Is(target error) bool { return target == ErrNoDomainLabel }

// ErrNoPartition says a pod covered by a budget with spec.partition has no
// partition: it lacks the label, or its name does not match the expression.
var ErrNoPartition = errors.New("the pod has no partition")

// noPartitionError is an ErrNoPartition that names the pod.
type noPartitionError struct{ msg string }

func (e *noPartitionError) Error() string        { return e.msg }
func (e *noPartitionError) Is(target error) bool { return target == ErrNoPartition }

// ErrNodeGone says a pod's node is gone and its domain cannot be told.
var ErrNodeGone = errors.New("the pod's node is gone and its domain is unknown (no eviction record, no topology label on the pod, no last labels of the node)")

// mightSelect evaluates a selector that does not parse as written, with
// plain string comparisons: false means it selects no pod with these labels
// whatever the invalid parts mean (its requirements are ANDed and one that
// can be read fails); true means it might. The CRD refuses such selectors,
// but a budget stored before it did keeps its selector until it is updated.
func mightSelect(sel *metav1.LabelSelector, podLabels map[string]string) bool {
	for k, v := range sel.MatchLabels {
		if got, ok := podLabels[k]; !ok || got != v {
			return false
		}
	}
	for _, e := range sel.MatchExpressions {
		got, has := podLabels[e.Key]
		switch e.Operator {
		case metav1.LabelSelectorOpIn:
			if !has || !slices.Contains(e.Values, got) {
				return false
			}
		case metav1.LabelSelectorOpNotIn:
			if has && slices.Contains(e.Values, got) {
				return false
			}
		case metav1.LabelSelectorOpExists:
			if !has {
				return false
			}
		case metav1.LabelSelectorOpDoesNotExist:
			if has {
				return false
			}
		}
	}
	return true
}

func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// isReady reports the pod's Ready condition.
func isReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// IsHealthy says whether a pod counts as healthy apart from eviction
// records: Ready and not being deleted.
func IsHealthy(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && isReady(pod)
}

// IsAvailable is IsHealthy under spec.minReadySeconds: Ready for at least
// minReady at now, from the Ready condition's lastTransitionTime (kept by
// the kubelet, so the same on every replica and across restarts). A Ready
// pod without a transition time counts as available.
func IsAvailable(pod *corev1.Pod, minReady time.Duration, now time.Time) bool {
	if !IsHealthy(pod) {
		return false
	}
	at, ok := availableAt(pod, minReady)
	return !ok || !now.Before(at)
}

// availableAt is when a Ready pod becomes available under minReady (false
// when it does not wait: no delay, or no transition time).
func availableAt(pod *corev1.Pod, minReady time.Duration) (time.Time, bool) {
	if minReady <= 0 {
		return time.Time{}, false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Add(minReady), true
		}
	}
	return time.Time{}, false
}

// checkAmounts refuses what the API server's validation should already have
// refused, so that a budget that slipped past it says why it allows nothing.
func checkAmounts(spec *policyv1alpha1.TopologyDisruptionBudgetSpec) error {
	if (spec.MaxUnavailable == nil) == (spec.MinAvailable == nil) {
		return fmt.Errorf("exactly one of spec.minAvailable and spec.maxUnavailable must be set")
	}
	for field, v := range map[string]*intstr.IntOrString{"spec.maxUnavailable": spec.MaxUnavailable, "spec.minAvailable": spec.MinAvailable} {
		if v == nil {
			continue
		}
		n, err := intstr.GetScaledValueFromIntOrPercent(v, 100, true)
		if err != nil || n < 0 || (v.Type == intstr.String && n > 100) {
			return fmt.Errorf("%s: %q is not a non-negative integer or a percentage between 0%% and 100%%", field, v.String())
		}
	}
	return nil
}
