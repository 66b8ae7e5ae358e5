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
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// Missing-pod attribution: a controller's missing pods (its scale minus its
// scheduled pods not being deleted) must count against some domain, never be ignored, or an
// eviction whose replacement does not exist yet would let another domain be
// disrupted at the same time. The rules, in order:
//
//  1. A missing pod explained by an eviction record of the same controller
//     belongs to the record's domain; a pod being deleted explains one the
//     same way, in its record's domain when it was evicted (the domain the
//     grant charged, even if its node was relabelled since), else in its
//     own; it still counts where it runs, as itself. A record whose pod's
//     name is now held by a scheduled pod of the same controller (a
//     StatefulSet replacement) is done: that pod counts where it runs.
//     When the controller misses at least as many pods as it has records,
//     every record explains one. When it misses fewer, which records are
//     done cannot be told (ReplicaSet replacements have new names, and
//     grant times are only kept to the second): every record is kept, and
//     each domain expects as many missing pods as could be its own,
//     min(missing, its records), so no domain is ever given an allowance
//     for a pod missing from it. The records are dropped once nothing is
//     missing.
//  2. A controller whose scheduled pods all sit in one domain, one of them
//     at least not being deleted, expects exactly its scale there (its
//     other missing pods, and policy/v1's view of a surge, where pods
//     briefly outnumber the scale).
//  3. Otherwise each domain expects the controller's pods scheduled there, and
//     every remaining missing pod counts against every covered domain of the
//     controller; a controller with no scheduled pod at all, or only pods
//     being deleted (also one the caller knows of with no pod in
//     existence), counts its missing pods against every domain of the
//     budget.
//
// Pods without a controller count where they run; nothing replaces them.

// attribution is what missing-pod attribution adds to the domains.
type attribution struct {
	// expected adds expected pods to the named domains.
	expected map[string]int32
	// everyDomain adds expected pods to every domain of the budget.
	everyDomain int32
	// keptRecords are the gone records still explaining a missing pod.
	keptRecords []policyv1alpha1.DisruptedPod
	// noScale lists pods whose controller has no known scale.
	noScale []string
	// ofOtherSpec are, by record key, the gone records of another
	// DomainSpec, whose domain the computation replaced with anyDomain.
	ofOtherSpec map[RecordKey]policyv1alpha1.DisruptedPod
	// partition is the budget's spec.partition (nil: domains from nodes):
	// a StatefulSet's missing pods are then placed by their names (rule 0).
	partition *partitionSource
}

// ownerPods gathers one scale-bearing controller's pods by domain.
type ownerPods struct {
	owner Owner
	// scheduled counts the controller's placed pods by domain; pods outside
	// nodeSelectorTerm and pods without a domain have their own keys.
	scheduled map[string]int32
	// deleting counts, by the same keys, the scheduled pods being deleted.
	deleting map[string]int32
	// inPlace counts, by the same keys, the pods being deleted whose
	// stand-in explains a missing pod where they run: only there does such
	// a pod, counted as itself, cover the missing pod its stand-in places.
	inPlace map[string]int32
	// total counts the placed pods not being deleted.
	total   int32
	records []policyv1alpha1.DisruptedPod
	// goneDomains are the domains of the controller's pods whose node is
	// gone ("" when unknown): each is a missing pod of that domain.
	goneDomains []string
	// unscheduled are the creation times of the controller's pods that
	// exist but have no node yet.
	unscheduled []time.Time
	// names holds every placed pod of the controller by name, with its
	// domain ("" when it has none, or is outside nodeSelectorTerm).
	names map[string]string
	// listed says the controller is one of the input's Controllers, known
	// whether or not any of its pods or records is.
	listed bool
}

const (
	uncoveredKey = "\x00uncovered"
	noDomainKey  = "\x00nodomain"
)

// attributeMissing applies the rules above to a budget's placed pods and
// its records of pods gone (gone) or being deleted (deleting): it groups
// the pods and records by scale-bearing controller, then places each
// controller's missing pods.
func attributeMissing(placed placement, gone, deleting []policyv1alpha1.DisruptedPod, owners map[types.UID]Owner, controllers []Owner, domainSpec string, partition *partitionSource) attribution {
	att := attribution{expected: map[string]int32{}, partition: partition}
	groups := ownerGroups{owners: owners, byOwner: map[types.UID]*ownerPods{}}
	granted := grantsOf(deleting, domainSpec)
	for i := range placed.pods {
		att.addPlaced(&placed.pods[i], groups, granted)
	}
	att.addGoneRecords(gone, scheduledNames(placed), groups, domainSpec)
	// Controllers whose template the selector matches count even when none
	// of their pods exists (deleted, or blocked from being created): their
	// scale is missing everywhere (rule 3).
	for _, o := range controllers {
		groups.ensure(o).listed = true
	}
	for _, op := range groups.inUIDOrder() {
		att.addOwner(op)
	}
	return att
}

// ownerGroups groups a budget's pods and records by scale-bearing
// controller. owners maps the controller of a pod to the one whose scale
// it counts against (a ReplicaSet of a Deployment to the Deployment).
type ownerGroups struct {
	owners  map[types.UID]Owner
	byOwner map[types.UID]*ownerPods
}

// of returns the group of the scale-bearing controller of a pod's
// controller ctrl; false when its scale is unknown.
func (g ownerGroups) of(ctrl types.UID) (*ownerPods, bool) {
	o, ok := g.owners[ctrl]
	if !ok {
		return nil, false
	}
	return g.ensure(o), true
}

// ensure returns the group of o, made empty if none of its pods or
// records was seen.
func (g ownerGroups) ensure(o Owner) *ownerPods {
	op := g.byOwner[o.UID]
	if op == nil {
		op = newOwnerPods(o)
		g.byOwner[o.UID] = op
	}
	return op
}

// inUIDOrder returns the groups sorted by their controller's UID, so that
// results are deterministic.
func (g ownerGroups) inUIDOrder() []*ownerPods {
	out := make([]*ownerPods, 0, len(g.byOwner))
	for _, op := range g.byOwner {
		out = append(out, op)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].owner.UID < out[j].owner.UID })
	return out
}

// grants are the eviction records of pods being deleted (or on a node
// that is gone), by "name/UID": such a pod's record explains its missing
// pod once it is gone, in the record's domain and from its grant on. A
// record of another spec names no domain of this one, and its grant was
// decided on other domains: it is left out, and its pod stands in as a pod
// deleted without an eviction does (where it is now, explaining no Pending
// pod), never more strongly.
type grants map[string]policyv1alpha1.DisruptedPod

func grantsOf(deleting []policyv1alpha1.DisruptedPod, domainSpec string) grants {
	g := make(grants, len(deleting))
	for _, r := range deleting {
		if recordOfSpec(r, domainSpec) {
			g[r.Name+"/"+string(r.UID)] = r
		}
	}
	return g
}

// recordOf returns the eviction record of a pod (recordOfPod): a UID-less
// record older than the pod is a predecessor's, and the pod is being
// deleted without an eviction of its own.
func (g grants) recordOf(p *corev1.Pod) (policyv1alpha1.DisruptedPod, bool) {
	if r, ok := g[p.Name+"/"+string(p.UID)]; ok {
		return r, true
	}
	if r, ok := g[p.Name+"/"]; ok && recordOfPod(r, p) {
		return r, true
	}
	return policyv1alpha1.DisruptedPod{}, false
}

// standIn is the record, named name, that a pod being deleted stands in
// for, in domain from its deletion; an evicted pod's (evicted true) takes
// its record's grant time and, when the record names one, its domain.
func (g grants) standIn(name string, p *corev1.Pod, domain string) (rec policyv1alpha1.DisruptedPod, evicted bool) {
	rec = policyv1alpha1.DisruptedPod{Name: name, Domain: domain, Time: *p.DeletionTimestamp}
	r, evicted := g.recordOf(p)
	if evicted {
		rec.Time = r.Time
		if r.Domain != "" {
			rec.Domain = r.Domain
		}
	}
	return rec, evicted
}

// addPlaced counts one placed pod. A pod without a controller counts where
// it runs, and on a node that is gone it is gone: nothing replaces it. So
// does a pod whose controller's scale is unknown, which is also reported;
// the others join their controller's group.
func (att *attribution) addPlaced(pp *placedPod, groups ownerGroups, granted grants) {
	if pp.controller == "" {
		if pp.kind == inDomain {
			att.expected[pp.domain]++
		}
		return
	}
	op, ok := groups.of(pp.controller)
	if !ok {
		att.noScale = append(att.noScale, pp.pod.Name)
		if pp.kind == inDomain {
			att.expected[pp.domain]++
		}
		return
	}
	if pp.kind == inDomain || pp.kind == nodeGone {
		op.names[pp.pod.Name] = pp.domain
	} else {
		op.names[pp.pod.Name] = ""
	}
	switch key := scheduledKey(pp); {
	case key != "":
		op.addScheduled(key, pp.pod, granted)
	case pp.kind == unscheduled:
		op.unscheduled = append(op.unscheduled, pp.pod.CreationTimestamp.Time)
	case pp.kind == nodeGone:
		op.addOnGoneNode(pp, granted)
	}
}

// scheduledKey is the key a pod on a node that exists counts under in its
// controller's group: its domain, or the keys of pods outside
// nodeSelectorTerm and of pods without a domain; "" otherwise.
func scheduledKey(pp *placedPod) string {
	switch pp.kind {
	case inDomain:
		return pp.domain
	case uncovered:
		return uncoveredKey
	case noDomain:
		return noDomainKey
	}
	return ""
}

// addScheduled counts a pod where it runs (key). Being deleted, it is also
// one of its controller's missing pods (a ReplicaSet replaces it at once,
// while it still exists), and its replacement, if any, says nothing of
// which missing pod it replaced: it explains a missing pod like an eviction
// record does, through its stand-in.
//
// An evicted pod stands in for its record, from the grant and in the
// record's domain: the replacement created since may be its own, and the
// grant charged the domain the pod was in then, where the record places
// the missing pod once the pod is gone (its node may have been relabelled
// since; the pod still counts where it runs). A pod deleted without an
// eviction has no record to follow it: its stand-in explains no missing
// pod a Pending pod may be (see explainingRecords).
func (op *ownerPods) addScheduled(key string, p *corev1.Pod, granted grants) {
	op.scheduled[key]++
	if p.DeletionTimestamp == nil {
		op.total++
		return
	}
	op.deleting[key]++
	standIn, evicted := granted.standIn(deletingRecordPrefix+p.Name, p, key)
	if evicted {
		standIn.Name = recordedDeletingPrefix + p.Name
	}
	if standIn.Domain == key {
		op.inPlace[key]++
	}
	op.records = append(op.records, standIn)
}

// addOnGoneNode counts a pod whose node is gone: it runs nowhere, and its
// controller misses it, in its domain. Once it is being deleted its
// controller may already have replaced it, with a pod whose place says
// nothing of which missing pod it replaced: it then explains a missing pod
// like an eviction record does, no more surely than one. Evicted, it
// explains from the grant, as its record will once it is gone: judged from
// its deletion, a replacement created between the two would be older than
// it, and the missing pod the grant charged to its domain could be
// explained nowhere.
func (op *ownerPods) addOnGoneNode(pp *placedPod, granted grants) {
	switch {
	case pp.pod.DeletionTimestamp != nil && pp.domain != "":
		standIn, _ := granted.standIn(goneRecordPrefix+pp.pod.Name, pp.pod, pp.domain)
		op.records = append(op.records, standIn)
	case pp.pod.DeletionTimestamp == nil:
		op.goneDomains = append(op.goneDomains, pp.domain)
	}
}

// scheduledNames are the names of the scheduled pods, by controller: a
// record of one of them has its replacement placed.
func scheduledNames(placed placement) map[types.UID]map[string]bool {
	names := map[types.UID]map[string]bool{}
	for i := range placed.pods {
		pp := &placed.pods[i]
		if pp.controller == "" || pp.kind == unscheduled || pp.kind == nodeGone {
			continue
		}
		if names[pp.controller] == nil {
			names[pp.controller] = map[string]bool{}
		}
		names[pp.controller][pp.pod.Name] = true
	}
	return names
}

// addGoneRecords adds the records of gone pods to their controllers'
// groups. A record whose pod's name a scheduled pod of the same controller
// holds is done (replaced under the same name, and placed). A record whose
// controller is unknown cannot explain a missing pod any more (the
// controller is gone): it is dropped. A record of another spec names no
// domain of this one: its missing pod counts in any domain.
func (att *attribution) addGoneRecords(gone []policyv1alpha1.DisruptedPod, scheduled map[types.UID]map[string]bool, groups ownerGroups, domainSpec string) {
	for _, r := range gone {
		if scheduled[r.ControllerUID][r.Name] {
			continue
		}
		op, ok := groups.of(r.ControllerUID)
		if !ok {
			continue
		}
		if !recordOfSpec(r, domainSpec) {
			if att.ofOtherSpec == nil {
				att.ofOtherSpec = map[RecordKey]policyv1alpha1.DisruptedPod{}
			}
			att.ofOtherSpec[KeyOf(r)] = r
			r.Domain = anyDomain
		}
		op.records = append(op.records, r)
	}
}

// addOwner places one controller's missing pods (its scale less its
// scheduled pods not being deleted): first those of pods on nodes that are
// gone, then those records explain (rule 1), then the rest by rule 2 or 3.
func (att *attribution) addOwner(op *ownerPods) {
	if att.addByName(op) {
		return
	}
	missing := max(op.owner.Replicas-op.total, 0)
	explained := att.placeOnGoneNodes(op, missing)
	charged := map[string]int32{}
	byRecords := att.explainByRecords(op, missing-explained, charged)
	explained += byRecords.n
	rest := missing - explained
	// A record dropped because unscheduled pods older than it were already
	// missing leaves missing pods whose place nobody knows (a Pending pod
	// lands anywhere, and a surge pod may have been no missing pod at all,
	// or the operator's clock may run ahead of the API server's): they
	// count against every domain of the budget, the record's included.
	spread := int32(0)
	if byRecords.older {
		spread, rest = rest, 0
		att.everyDomain += spread
	}
	switch {
	case op.total == 0:
		att.addAllDeleting(op, rest, charged)
	case len(op.scheduled) == 1:
		att.addOneDomain(op, explained+spread, charged)
	default:
		att.addSpread(op, rest, charged)
	}
}

// placeOnGoneNodes places the missing pods of pods on a node that is gone
// in their domains, up to missing, and returns how many it placed. Those
// of unknown domain are left to count as any unexplained one.
func (att *attribution) placeOnGoneNodes(op *ownerPods, missing int32) (placed int32) {
	for _, d := range op.goneDomains {
		if d != "" && placed < missing {
			att.expected[d]++
			placed++
		}
	}
	return placed
}

// recordsExplained is what rule 1 made of a controller's records: n
// missing pods explained, and older when a record was dropped, or limited,
// because of unscheduled pods older than it.
type recordsExplained struct {
	n     int32
	older bool
}

// explainByRecords applies rule 1: the records that can still explain one
// of the controller's missing pods are kept, and charged is set to how
// many missing pods they place in each domain.
func (att *attribution) explainByRecords(op *ownerPods, missing int32, charged map[string]int32) (res recordsExplained) {
	records, open, older := explainingRecords(op.records, op.unscheduled, missing)
	res.older = older
	n := min(open, int32(len(records)))
	if n <= 0 {
		return res
	}
	perDomain := map[string]int32{}
	for _, r := range records {
		perDomain[r.Domain]++
	}
	for d, k := range perDomain {
		charged[d] = min(k, open)
	}
	res.n = n
	for _, r := range records {
		if isStandIn(r) {
			continue
		}
		if r.Domain == anyDomain {
			r = att.ofOtherSpec[KeyOf(r)]
		}
		att.keptRecords = append(att.keptRecords, r)
	}
	return res
}

// addAllDeleting is rule 3 for a controller with no pod that stays: its
// scheduled pods, if any, are all being deleted, and a missing pod no
// record explains (rest) has no place; were the domain of the last pods
// being deleted to own it (rule 2), every other domain would expect it
// only once they are gone. Those pods count where they run.
func (att *attribution) addAllDeleting(op *ownerPods, rest int32, charged map[string]int32) {
	for d, n := range op.scheduled {
		if isDomainKey(d) {
			att.expected[d] += n
		}
	}
	att.everyDomain += rest
	att.charge(charged, op.inPlace)
}

// addOneDomain is rule 2: the controller's scale, less the missing pods
// placed elsewhere (placed: by records, or counted in every domain),
// belongs to its one domain; a pod being deleted whose stand-in placed its
// missing pod elsewhere (its node was relabelled) also counts where it
// runs.
func (att *attribution) addOneDomain(op *ownerPods, placed int32, charged map[string]int32) {
	for d, n := range op.scheduled {
		if !isDomainKey(d) {
			continue
		}
		e := op.owner.Replicas - placed + op.deleting[d] - op.inPlace[d]
		// Never fewer than the domain's pods being deleted plus the
		// others the scale covers: a deleting pod counts where it runs,
		// even when a pod on a deleted node, or a record elsewhere, took
		// the missing pod its deletion made.
		if floor := op.deleting[d] + max(0, min(n-op.deleting[d], op.owner.Replicas)) - charged[d]; e < floor {
			e = floor
		}
		att.expected[d] += e
	}
	att.charge(charged, nil)
}

// addSpread is rule 3: each domain expects the controller's pods scheduled
// there plus every missing pod no record explains (rest). A pod being
// deleted already counts where it runs: a domain's charge adds what its
// deleting pods whose stand-in is there do not cover.
func (att *attribution) addSpread(op *ownerPods, rest int32, charged map[string]int32) {
	for d, n := range op.scheduled {
		if isDomainKey(d) {
			att.expected[d] += n + rest
		}
	}
	att.charge(charged, op.inPlace)
}

func newOwnerPods(o Owner) *ownerPods {
	return &ownerPods{owner: o, scheduled: map[string]int32{}, deleting: map[string]int32{}, inPlace: map[string]int32{},
		names: map[string]string{}}
}

// addByName is rule 0, for a budget whose partitions the pods' names tell
// (spec.partition): a StatefulSet's pods are named <name>-<ordinal>, so
// each of its missing pods (an ordinal below its scale with no pod) is
// placed in its own partition, whatever explains it, and every pod that
// exists counts in its partition, being deleted or on a gone node
// included; a missing name without a partition counts in every domain.
// The records of missing names still explain them and are kept; the others
// are done. It says false, and the other rules apply, for any other
// controller, a partition source the names do not tell (a label other than
// the StatefulSet's pod-index or pod-name), or a controller known by a
// record alone. Only an apps/v1 StatefulSet's ordinals are known
// (Owner.OrdinalStart, from spec.ordinals.start): a custom controller of
// the same kind name may skip ordinals, and follows the other rules.
func (att *attribution) addByName(op *ownerPods) bool {
	if att.partition == nil || !att.partition.namesTell() || op.owner.OrdinalStart == nil || op.owner.Name == "" || (len(op.names) == 0 && !op.listed) {
		// A controller known by a record alone counts its missing pods
		// in every domain, opening none (see DomainSpecOf).
		return false
	}
	missing := map[string]string{}
	start := *op.owner.OrdinalStart
	for i := start; i < start+op.owner.Replicas; i++ {
		name := fmt.Sprintf("%s-%d", op.owner.Name, i)
		if _, ok := op.names[name]; ok {
			continue
		}
		// A missing name without a partition counts in every domain.
		missing[name] = att.partition.ofStatefulSetPod(name, i)
	}
	for _, d := range op.names {
		if d != "" {
			att.expected[d]++
		}
	}
	for _, d := range missing {
		if d == "" {
			att.everyDomain++
			continue
		}
		att.expected[d]++
	}
	for _, r := range op.records {
		if _, ok := missing[r.Name]; !ok || isStandIn(r) {
			continue
		}
		if r.Domain == anyDomain {
			r = att.ofOtherSpec[KeyOf(r)]
		}
		att.keptRecords = append(att.keptRecords, r)
	}
	return true
}

// charge adds the missing pods records place in each domain, less the
// deleting pods already counted there whose stand-in places its missing pod
// there too; those of records of another spec count in every domain.
func (att *attribution) charge(charged, counted map[string]int32) {
	att.everyDomain += charged[anyDomain]
	for d, k := range charged {
		if isDomainKey(d) && k > counted[d] {
			att.expected[d] += k - counted[d]
		}
	}
}

func isDomainKey(d string) bool { return d != uncoveredKey && d != noDomainKey && d != anyDomain }

// explainingRecords returns the records of one controller that can still
// explain one of its missing pods, and how many missing pods records may
// explain at all. Records are bounded, losslessly for the arithmetic, which
// only ever uses min(records of a domain, missing):
//   - an unscheduled pod created before a grant was already missing then:
//     it is not that eviction's replacement, so a record explains only
//     missing pods beyond the unscheduled ones older than it (a replica
//     stuck Pending does not keep every later record alive);
//   - per domain, no more records are kept than missing pods they may
//     explain; the newest are kept (grant times are kept to the second, so
//     which of several records is done cannot be told, and each domain
//     keeps as many as could be its own), except that a record in status
//     takes a full domain's place from the stand-in of a pod being
//     deleted: the record would be dropped from status for good, while the
//     stand-in lasts only as long as its pod (and, for a pod deleted
//     without an eviction, no record follows it).
//
// The unscheduled pods older than every kept record are not explained by
// any: they count against every domain, as any missing pod of unknown place.
//
// older reports that some record was dropped, or limited, because of
// unscheduled pods older than it.
func explainingRecords(records []policyv1alpha1.DisruptedPod, unscheduled []time.Time, missing int32) (kept []policyv1alpha1.DisruptedPod, open int32, older bool) {
	if missing <= 0 || len(records) == 0 {
		return nil, 0, false
	}
	olderThan := func(t time.Time) int32 {
		n := int32(0)
		for _, c := range unscheduled {
			// A pod of unknown age may be the replacement.
			if !c.IsZero() && c.Before(t.Truncate(time.Second)) {
				n++
			}
		}
		return n
	}
	sorted := append([]policyv1alpha1.DisruptedPod(nil), records...)
	sort.Slice(sorted, func(i, j int) bool {
		if !sorted[i].Time.Equal(&sorted[j].Time) {
			return sorted[j].Time.Before(&sorted[i].Time)
		}
		return sorted[i].Name < sorted[j].Name
	})
	perDomain := map[string]int32{}
	var olders []int32 // of kept, one for one
	for _, r := range sorted {
		o := olderThan(r.Time.Time)
		if strings.HasPrefix(r.Name, deletingRecordPrefix) {
			// The stand-in of a pod deleted without an eviction lasts only
			// until the pod is gone, and no record follows it: were it to
			// take a Pending pod for its replacement, the budget would
			// swing back once it vanished. Every unscheduled pod counts as
			// older than it.
			o = int32(len(unscheduled))
		}
		older = older || o > 0
		capacity := missing - o
		if capacity <= 0 || perDomain[r.Domain] > capacity {
			continue
		}
		if perDomain[r.Domain] == capacity {
			// The domain is full. A record in status takes the place of a
			// stand-in kept there: the count, and so the arithmetic, stays
			// the same (the stand-in's pod still counts where it runs),
			// but the record, not kept, would be dropped from status for
			// good, while the stand-in lasts only as long as its pod.
			// Sorted first, the stand-in has no fewer unscheduled pods
			// older than it than the record has: open never shrinks.
			if isStandIn(r) {
				continue
			}
			i := lastStandIn(kept, r.Domain)
			if i < 0 {
				continue
			}
			kept, olders = slices.Delete(kept, i, i+1), slices.Delete(olders, i, i+1)
			perDomain[r.Domain]--
		}
		perDomain[r.Domain]++
		kept = append(kept, r)
		olders = append(olders, o)
	}
	if len(kept) == 0 {
		return nil, 0, older
	}
	// Each record explains one missing pod at most, among those beyond
	// the unscheduled pods older than it: count them as a matching, the
	// most restricted records first (a record less restricted than another
	// can take any missing pod the other can).
	slices.SortFunc(olders, func(a, b int32) int { return int(b - a) })
	for _, o := range olders {
		if open < missing-o {
			open++
		}
	}
	return kept, open, older
}

// lastStandIn returns the index of the last stand-in of domain d in
// records, or -1.
func lastStandIn(records []policyv1alpha1.DisruptedPod, d string) int {
	for i := len(records) - 1; i >= 0; i-- {
		if records[i].Domain == d && isStandIn(records[i]) {
			return i
		}
	}
	return -1
}

// goneRecordPrefix names the stand-in record of a deleting pod on a deleted
// node: it explains a missing pod like a record, and is never written.
const goneRecordPrefix = "\x00gone/"

// deletingRecordPrefix names the stand-in record of a pod being deleted on a
// node that exists, without an eviction record: it explains a missing pod of
// its domain, and is never written.
const deletingRecordPrefix = "\x00deleting/"

// recordedDeletingPrefix names the stand-in of a pod being deleted whose
// eviction record is in status: it explains a missing pod as that record
// will once the pod is gone (from the grant), and is never written.
const recordedDeletingPrefix = "\x00evicted/"

// isStandIn says whether a record is the stand-in of a pod being deleted,
// never written, rather than a record in status.
func isStandIn(r policyv1alpha1.DisruptedPod) bool {
	return strings.HasPrefix(r.Name, goneRecordPrefix) || strings.HasPrefix(r.Name, deletingRecordPrefix) ||
		strings.HasPrefix(r.Name, recordedDeletingPrefix)
}
