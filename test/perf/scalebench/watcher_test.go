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

package scalebench

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
	"github.com/tdb-operator/tdb-operator/test/perf/perfenv"
)

// The watcher checks every budget at every pod event, independently of the
// operator: from its own informers it keeps each workload's pods, where
// they run and whether they are healthy, and after each event of a
// workload's pod it measures the workload's unavailable pods per zone (the
// TDB rule) or in all (the PDB rule) and compares them with what the budget
// allows. It reads nothing the operator computes: only, for the status lag,
// the budget's status as the API server serves it (a TDB's healthy pods per
// zone; a PDB's, which core's disruption controller writes, per workload).
//
// A zone's expected pods are the workload's pods scheduled there plus the
// missing ones attributed to it (design.md §3): a pod deleted from a zone is
// owed to that zone until a new pod of the workload is scheduled (a
// StatefulSet's replacement by name, a Deployment's first in its zone, else
// the oldest debt), and missing pods beyond the debts count against every
// zone. A zone's unavailable pods are its expected pods minus its healthy
// ones (Ready, Running, not being deleted).

// rule is one workload's budget as the watcher checks it.
type rule struct {
	perZone        bool
	maxUnavailable *intstr.IntOrString
	minAvailable   *intstr.IntOrString
	maxDisrupted   int // 0: no limit
}

// allowedUnavailable is how many of expected pods may be unavailable,
// percentages rounded up as policy/v1 does.
func (r rule) allowedUnavailable(expected int) int {
	scaled := func(v *intstr.IntOrString) int {
		n, _ := intstr.GetScaledValueFromIntOrPercent(v, expected, true)
		return n
	}
	if r.maxUnavailable != nil {
		return scaled(r.maxUnavailable)
	}
	return max(0, expected-scaled(r.minAvailable))
}

// wpod is what the watcher keeps of a pod.
type wpod struct {
	uid      types.UID
	node     string
	healthy  bool
	deleting bool
	// debted: its zone is owed a pod for it (it is being deleted).
	debted bool
}

// workload is one workload's pods as the watcher sees them.
type workload struct {
	ns, app     string
	replicas    int
	zones       []string // the zones its pods may run in
	statefulSet bool
	pods        map[string]*wpod
	// debts are zones owed a pod, oldest first, with the name of the pod
	// that left.
	debts []debt
	rule  *rule
	// violating is the zone set of the open excess ("" none).
	violating string
	history   []string
	states    []state
}

type debt struct{ zone, name string }

// violation is one episode of a budget exceeded.
type violation struct {
	At       time.Duration `json:"at_s"`
	Workload string        `json:"workload"`
	Detail   string        `json:"detail"`
}

// lagKey is a budget's domain.
type lagKey struct{ ns, name, zone string }

type pendingLag struct {
	at      time.Time
	healthy int
}

// slowLag is a status lag over slowLagMin, with what the watcher saw of
// its domain meanwhile: the evidence to read against the operator's debug
// log (make bench-scale OPERATOR_ARGS=--zap-log-level=debug).
type slowLag struct {
	Lag    time.Duration
	Domain string
	At     time.Duration // since the watcher was armed
	Trace  []string
}

// slowLagMin is the shortest lag that keeps its trace; traceLen how many of
// a domain's last events a trace keeps.
const (
	slowLagMin  = time.Second
	traceLen    = 30
	slowestKept = 30
)

// watcher is the independent budget checker.
type watcher struct {
	start     time.Time
	zoneOf    map[string]string
	workloads map[string]*workload // ns/app
	events    chan func()

	mu         sync.Mutex
	checked    int
	violations []violation
	// excesses count the times a workload went over budget after an event
	// other than an eviction.
	excesses int
	// candidates are the evictions that left their zone over budget.
	candidates []candidate

	// The status lag: healthy pods per domain (a TDB's zone, a PDB's
	// workload: zone "") against the budget's status.
	statuses map[types.NamespacedName]*policyv1alpha1.TopologyDisruptionBudgetStatus
	healthy  map[lagKey]int
	pending  map[lagKey][]pendingLag
	lags     []time.Duration
	// pdbHealthy are the PodDisruptionBudgets' healthy pods as their
	// statuses show them (the status lag of core's system, per workload).
	pdbHealthy map[types.NamespacedName]int
	// traces keep each domain's last pod and status changes; slow the
	// lags over slowLagMin with theirs.
	traces map[lagKey][]string
	slow   []slowLag
}

func newWatcher(scale *perfenv.Scale, rules map[string]*rule) *watcher {
	w := &watcher{zoneOf: map[string]string{}, workloads: map[string]*workload{}, events: make(chan func(), 100000),
		statuses: map[types.NamespacedName]*policyv1alpha1.TopologyDisruptionBudgetStatus{},
		healthy:  map[lagKey]int{}, pending: map[lagKey][]pendingLag{}, traces: map[lagKey][]string{},
		pdbHealthy: map[types.NamespacedName]int{}}
	for _, sw := range scale.Workloads {
		r := rules[sw.Namespace+"/"+sw.Name]
		if r == nil {
			continue
		}
		zones := []string{"zone-a", "zone-b", "zone-c"}
		if sw.Zone != "" {
			zones = []string{sw.Zone}
		}
		w.workloads[sw.Namespace+"/"+sw.Name] = &workload{ns: sw.Namespace, app: sw.Name, replicas: sw.Replicas, zones: zones,
			statefulSet: sw.Kind == "StatefulSet", pods: map[string]*wpod{}, rule: r}
	}
	return w
}

// run starts the informers and checks until ctx ends; it returns once the
// caches have synced and every workload was checked once.
func (w *watcher) run(ctx context.Context, cs kubernetes.Interface, tdbCache cache.Cache, prefix string) error {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {}))
	nodes := f.Core().V1().Nodes().Informer()
	pf := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = perfenv.ScaleLabel + "=" + prefix
	}))
	pods := pf.Core().V1().Pods().Informer()
	_, _ = nodes.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			n := o.(*corev1.Node)
			zone := n.Labels[kwokenv.ZoneKey]
			w.events <- func() { w.zoneOf[n.Name] = zone }
		},
	})
	onPod := func(o any) {
		p, ok := o.(*corev1.Pod)
		if !ok {
			if t, ok2 := o.(toolscache.DeletedFinalStateUnknown); ok2 {
				p, _ = t.Obj.(*corev1.Pod)
			}
		}
		if p == nil {
			return
		}
		at := time.Now()
		var gone bool
		if _, del := o.(toolscache.DeletedFinalStateUnknown); del {
			gone = true
		}
		cp := &wpod{uid: p.UID, node: p.Spec.NodeName, deleting: p.DeletionTimestamp != nil,
			healthy: p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && ready(p)}
		key, name := p.Namespace+"/"+p.Labels["app"], p.Name
		w.events <- func() { w.podEvent(at, key, name, cp, gone) }
	}
	_, _ = pods.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    onPod,
		UpdateFunc: func(_, n any) { onPod(n) },
		DeleteFunc: func(o any) {
			if p, ok := o.(*corev1.Pod); ok {
				o = toolscache.DeletedFinalStateUnknown{Obj: p}
			}
			onPod(o)
		},
	})
	if tdbCache != nil {
		inf, err := tdbCache.GetInformer(ctx, &policyv1alpha1.TopologyDisruptionBudget{})
		if err != nil {
			return err
		}
		onTDB := func(o any) {
			t, ok := o.(*policyv1alpha1.TopologyDisruptionBudget)
			if !ok {
				return
			}
			at := time.Now()
			st, rv := t.Status.DeepCopy(), t.ResourceVersion
			key := types.NamespacedName{Namespace: t.Namespace, Name: t.Name}
			w.events <- func() { w.statusEvent(at, key, st, rv) }
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: onTDB, UpdateFunc: func(_, n any) { onTDB(n) }}); err != nil {
			return err
		}
	}
	onPDB := func(o any) {
		p, ok := o.(*policyv1.PodDisruptionBudget)
		if !ok {
			return
		}
		at := time.Now()
		key, healthy, rv := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}, int(p.Status.CurrentHealthy), p.ResourceVersion
		w.events <- func() { w.pdbEvent(at, key, healthy, rv) }
	}
	if _, err := pf.Policy().V1().PodDisruptionBudgets().Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: onPDB, UpdateFunc: func(_, n any) { onPDB(n) }}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	pf.Start(ctx.Done())
	pf.WaitForCacheSync(ctx.Done())
	synced := make(chan struct{})
	w.events <- func() { close(synced) }
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-w.events:
				ev()
			}
		}
	}()
	select {
	case <-synced:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// arm starts the clock: what the watcher saw before (the initial lists) is
// the settled state, and the violations and lags count from now.
func (w *watcher) arm() {
	done := make(chan struct{})
	w.events <- func() {
		w.start = time.Now()
		w.mu.Lock()
		w.checked, w.violations, w.lags, w.excesses, w.candidates, w.slow = 0, nil, nil, 0, nil, nil
		w.mu.Unlock()
		for k := range w.pending {
			delete(w.pending, k)
		}
		close(done)
	}
	<-done
}

// flush waits until the events queued so far are processed.
func (w *watcher) flush() {
	done := make(chan struct{})
	w.events <- func() { close(done) }
	<-done
}

func (w *watcher) podEvent(at time.Time, key, name string, p *wpod, gone bool) {
	wl := w.workloads[key]
	if wl == nil {
		return
	}
	old := wl.pods[name]
	if old != nil && old.uid != p.uid && !gone {
		// A StatefulSet's replacement under the old name whose
		// predecessor's deletion event was not seen yet.
		wl.leave(name, old, w.zoneOf)
		old = nil
	}
	// An eviction that counts is that of a healthy pod: a pod already
	// unavailable (not Ready, not yet running, on a node that is gone)
	// leaves the numbers as they were.
	evicted := ""
	switch {
	case gone:
		if old != nil && old.uid == p.uid {
			if !old.debted && old.healthy {
				evicted = w.zoneOf[old.node]
			}
			wl.leave(name, old, w.zoneOf)
			delete(wl.pods, name)
		}
	default:
		if p.deleting && p.node != "" && old != nil && !old.deleting && old.healthy {
			evicted = w.zoneOf[p.node]
		}
		if p.node != "" && !p.deleting && (old == nil || old.node == "") {
			wl.payDebt(name, w.zoneOf[p.node])
		}
		if old != nil {
			p.debted = old.debted
		}
		wl.pods[name] = p
		if p.deleting {
			wl.leave(name, p, w.zoneOf)
		}
	}
	wl.note(at, w.start, name, p, gone, w.zoneOf)
	w.check(at, wl, evicted, name)
}

// historyLen is how many of a workload's last events a violation shows:
// enough to cover a replacement's life from its creation to Ready.
const historyLen = 40

// note keeps the workload's last events, for evidence.
func (wl *workload) note(at, start time.Time, name string, p *wpod, gone bool, zoneOf map[string]string) {
	state := "unready"
	switch {
	case gone:
		state = "gone"
	case p.node == "":
		state = "unscheduled"
	case p.deleting:
		state = "deleting"
	case p.healthy:
		state = "healthy"
	}
	wl.history = append(wl.history, fmt.Sprintf("%.3fs %s %s %s", at.Sub(start).Seconds(), name, state, zoneOf[p.node]))
	if len(wl.history) > historyLen {
		wl.history = wl.history[len(wl.history)-historyLen:]
	}
}

// leave makes a pod that is being deleted (or gone) a debt of its zone,
// once.
func (wl *workload) leave(name string, p *wpod, zoneOf map[string]string) {
	if p.debted || p.node == "" {
		return
	}
	p.debted = true
	wl.debts = append(wl.debts, debt{zone: zoneOf[p.node], name: name})
}

// payDebt settles the debt a newly scheduled pod repays.
func (wl *workload) payDebt(name, zone string) {
	pick := -1
	for i, d := range wl.debts {
		if wl.statefulSet && d.name == name {
			pick = i
			break
		}
		if !wl.statefulSet && d.zone == zone && pick < 0 {
			pick = i
		}
	}
	if pick < 0 && !wl.statefulSet && len(wl.debts) > 0 {
		pick = 0
	}
	if pick >= 0 {
		wl.debts = append(wl.debts[:pick], wl.debts[pick+1:]...)
	}
}

// unavailable measures the workload now: per zone, expected and healthy.
func (w *watcher) unavailable(wl *workload, records map[string]bool) (expected, healthy map[string]int, total, totalHealthy int) {
	expected, healthy = map[string]int{}, map[string]int{}
	scheduled := 0
	for name, p := range wl.pods {
		if p.node == "" || p.deleting {
			// A pod being deleted is its zone's debt.
			continue
		}
		scheduled++
		z := w.zoneOf[p.node]
		expected[z]++
		if p.healthy && !records[name] {
			healthy[z]++
			totalHealthy++
		}
	}
	missing := max(0, wl.replicas-scheduled)
	for _, d := range wl.debts {
		if missing == 0 {
			break
		}
		expected[d.zone]++
		missing--
	}
	for _, z := range wl.zones {
		expected[z] += missing
	}
	return expected, healthy, wl.replicas, totalHealthy
}

// check measures the workload after an event; evicted is the zone of a pod
// this event shows evicted (now being deleted, or gone without being seen
// deleting), "" for other events. An eviction that leaves its zone (the
// workload, for a PDB) over budget, or too many zones disrupted, is a
// violation; an excess that follows another event (a replacement that
// lands unready in another zone than the pod it replaces) is only counted
// as such.
func (w *watcher) check(at time.Time, wl *workload, evicted, pod string) {
	w.mu.Lock()
	w.checked++
	w.mu.Unlock()
	var records map[string]bool
	key := types.NamespacedName{Namespace: wl.ns, Name: wl.app}
	if st := w.statuses[key]; st != nil {
		records = map[string]bool{}
		for _, r := range st.DisruptedPods {
			if p := wl.pods[r.Name]; p != nil && (r.UID == "" || r.UID == p.uid) {
				records[r.Name] = true
			}
		}
	}
	expected, healthy, total, totalHealthy := w.unavailable(wl, records)
	var over []string
	blame := false
	st := state{room: map[string]int{}, disrupted: map[string]bool{}}
	if wl.rule.perZone {
		disrupted := 0
		zones := make([]string, 0, len(expected))
		for z := range expected {
			zones = append(zones, z)
		}
		sort.Strings(zones)
		for _, z := range zones {
			u := expected[z] - healthy[z]
			if u > 0 {
				disrupted++
				st.disrupted[z] = true
			}
			st.room[z] = wl.rule.allowedUnavailable(expected[z]) - u
			if a := wl.rule.allowedUnavailable(expected[z]); u > a {
				over = append(over, fmt.Sprintf("%s: %d of %d unavailable, %d allowed", z, u, expected[z], a))
				blame = blame || (evicted != "" && z == evicted)
			}
		}
		if wl.rule.maxDisrupted > 0 && disrupted > wl.rule.maxDisrupted {
			over = append(over, fmt.Sprintf("%d zones disrupted, %d allowed", disrupted, wl.rule.maxDisrupted))
			blame = blame || evicted != ""
		}
		if !w.start.IsZero() {
			for _, z := range zones {
				w.lagPod(at, lagKey{wl.ns, wl.app, z}, healthy[z], pod)
			}
		}
	} else {
		u, a := total-totalHealthy, wl.rule.allowedUnavailable(total)
		st.room[""] = a - u
		if u > a {
			over = append(over, fmt.Sprintf("%d of %d unavailable, %d allowed", u, total, a))
			blame = evicted != ""
		}
		if !w.start.IsZero() {
			w.lagPod(at, lagKey{wl.ns, wl.app, ""}, totalHealthy, pod)
		}
	}
	sig := strings.Join(over, "; ")
	if !w.start.IsZero() {
		w.mu.Lock()
		switch {
		case blame:
			zone := evicted
			if !wl.rule.perZone {
				zone = ""
			}
			w.candidates = append(w.candidates, candidate{wl: wl, pod: wl.ns + "/" + pod, zone: zone, at: at, before: len(wl.states),
				v: violation{At: at.Sub(w.start).Round(time.Millisecond), Workload: wl.ns + "/" + wl.app,
					Detail: "an eviction in " + evicted + " left " + sig + " (" + w.podsLine(wl) + "; last events: " + strings.Join(wl.history, ", ") + ")"}})
		case sig != "" && wl.violating == "":
			w.excesses++
		}
		w.mu.Unlock()
	}
	st.at = at
	wl.states = append(wl.states, st)
	wl.violating = sig
}

// state is a workload's room for one more eviction after an event: per
// zone ("" for a PDB's whole workload) the unavailable pods it may still
// add, and the zones disrupted.
type state struct {
	at        time.Time
	room      map[string]int
	disrupted map[string]bool
}

// allows says whether one more eviction of a healthy pod in zone was within
// the workload's budget in this state.
func (st state) allows(r *rule, zone string) bool {
	if st.room[zone] < 1 {
		return false
	}
	return r.maxDisrupted == 0 || st.disrupted[zone] || len(st.disrupted) < r.maxDisrupted
}

// candidate is an eviction of a healthy pod after which its zone was over
// budget: a violation unless, at some moment between the eviction call and
// the pod's deletion (when the budget decided it), the eviction was within
// the budget (a replacement then landed unready in the zone, or another
// event came between the decision and the deletion).
type candidate struct {
	wl     *workload
	pod    string
	zone   string
	at     time.Time
	before int // the states before the eviction: wl.states[:before]
	v      violation
}

// decidedWithinBudget says whether the eviction was within budget in a
// state between sent (the call) and the eviction's deletion.
func (c candidate) decidedWithinBudget(sent time.Time) bool {
	states := c.wl.states[:c.before]
	i := sort.Search(len(states), func(i int) bool { return states[i].at.After(sent) })
	if i > 0 {
		i-- // the state the call found
	}
	for ; i < len(states); i++ {
		if states[i].allows(c.wl.rule, c.zone) {
			return true
		}
	}
	return false
}

// podsLine lists the workload's unhealthy pods and debts, for evidence.
func (w *watcher) podsLine(wl *workload) string {
	var parts []string
	for name, p := range wl.pods {
		if !p.healthy {
			state := "unready"
			switch {
			case p.node == "":
				state = "unscheduled"
			case p.deleting:
				state = "deleting"
			}
			parts = append(parts, fmt.Sprintf("%s %s in %s", name, state, w.zoneOf[p.node]))
		}
	}
	sort.Strings(parts)
	for _, d := range wl.debts {
		parts = append(parts, fmt.Sprintf("%s gone from %s", d.name, d.zone))
	}
	return strings.Join(parts, ", ")
}

// lagPod notes a pod event (of pod, "" for a status event that changed the
// records) that changed a domain's healthy pods.
func (w *watcher) lagPod(at time.Time, k lagKey, healthy int, pod string) {
	prev, known := w.healthy[k]
	w.healthy[k] = healthy
	if known && prev == healthy {
		return
	}
	w.trace(k, at, fmt.Sprintf("pods: %d healthy (%s)", healthy, cmp.Or(pod, "records")))
	key := types.NamespacedName{Namespace: k.ns, Name: k.name}
	shown, isPDB := w.pdbHealthy[key]
	if st := w.statuses[key]; (st != nil && domainHealthy(st, k.zone) == healthy) || (k.zone == "" && isPDB && shown == healthy) {
		w.resolve(k, at)
		w.lags = append(w.lags, 0)
		return
	}
	w.pending[k] = append(w.pending[k], pendingLag{at: at, healthy: healthy})
}

// statusEvent takes a new status of a budget: the domains that now agree
// with the pods resolve their pending events.
func (w *watcher) statusEvent(at time.Time, key types.NamespacedName, st *policyv1alpha1.TopologyDisruptionBudgetStatus, rv string) {
	w.statuses[key] = st
	wl := w.workloads[key.Namespace+"/"+key.Name]
	if wl == nil || w.start.IsZero() {
		return
	}
	for _, d := range st.Domains {
		k := lagKey{key.Namespace, key.Name, d.Name}
		w.trace(k, at, fmt.Sprintf("status %s: %d healthy of %d expected, %d allowed; budget allows %d, %d records",
			rv, d.CurrentHealthy, d.ExpectedPods, d.DisruptionsAllowed, st.DisruptionsAllowed, len(st.DisruptedPods)))
	}
	// The records changed what counts as healthy: measure again.
	w.check(at, wl, "", "")
	for _, d := range st.Domains {
		k := lagKey{key.Namespace, key.Name, d.Name}
		if h, ok := w.healthy[k]; ok && int(d.CurrentHealthy) == h {
			w.resolve(k, at)
		}
	}
}

// pdbEvent takes a new status of a PodDisruptionBudget (core's system): it
// resolves the workload's pending events when its healthy pods agree.
func (w *watcher) pdbEvent(at time.Time, key types.NamespacedName, healthy int, rv string) {
	w.pdbHealthy[key] = healthy
	if w.workloads[key.Namespace+"/"+key.Name] == nil || w.start.IsZero() {
		return
	}
	k := lagKey{key.Namespace, key.Name, ""}
	w.trace(k, at, fmt.Sprintf("status %s: %d healthy", rv, healthy))
	if h, ok := w.healthy[k]; ok && h == healthy {
		w.resolve(k, at)
	}
}

func (w *watcher) resolve(k lagKey, at time.Time) {
	for _, p := range w.pending[k] {
		lag := at.Sub(p.at)
		w.lags = append(w.lags, lag)
		if lag >= slowLagMin {
			w.slow = append(w.slow, slowLag{Lag: lag, Domain: k.ns + "/" + k.name + " " + k.zone,
				At: p.at.Sub(w.start), Trace: slices.Clone(w.traces[k])})
		}
	}
	delete(w.pending, k)
}

// trace notes an event of the domain k.
func (w *watcher) trace(k lagKey, at time.Time, what string) {
	t := append(w.traces[k], fmt.Sprintf("%.3fs %s", at.Sub(w.start).Seconds(), what))
	if len(t) > traceLen {
		t = t[len(t)-traceLen:]
	}
	w.traces[k] = t
}

func domainHealthy(st *policyv1alpha1.TopologyDisruptionBudgetStatus, zone string) int {
	for _, d := range st.Domains {
		if d.Name == zone {
			return int(d.CurrentHealthy)
		}
	}
	return -1
}

// watchReport is what the watcher found.
type watchReport struct {
	Checked  int
	Excesses int
	// Violations are the evictions over budget at every moment from the
	// eviction call to the deletion; Races those over budget at the
	// deletion only (the budget allowed them when it decided).
	Violations []violation
	Races      int
	Lags       []time.Duration
	Unresolved int
	// NeverShown are the ages of the Unresolved changes at the report: how
	// long each had waited for a status when the turn was tallied.
	NeverShown []time.Duration
	// Slowest are the longest lags over slowLagMin, longest first, with
	// their domains' traces.
	Slowest []slowLag
	// Armed is when the watcher was armed: the traces' zero, to read them
	// against the operator's and the API server's logs.
	Armed time.Time
}

// report judges the candidates against the eviction calls (their send
// times) and returns what the watcher found.
func (w *watcher) report(calls []evictionCall) watchReport {
	w.flush()
	sent := map[string][]time.Time{}
	for _, c := range calls {
		if c.code == 201 {
			sent[c.pod] = append(sent[c.pod], c.at)
		}
	}
	done := make(chan watchReport)
	w.events <- func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		r := watchReport{Checked: w.checked, Excesses: w.excesses, Lags: append([]time.Duration(nil), w.lags...), Armed: w.start}
		for _, c := range w.candidates {
			// The last allowed call for the pod before its deletion; none
			// (deleted otherwise): judged at the deletion alone.
			from := c.at
			for _, t := range sent[c.pod] {
				if !t.After(c.at) && (from.Equal(c.at) || t.After(from)) {
					from = t
				}
			}
			if c.decidedWithinBudget(from) {
				r.Races++
				continue
			}
			r.Violations = append(r.Violations, c.v)
		}
		now := time.Now()
		for _, p := range w.pending {
			r.Unresolved += len(p)
			for _, l := range p {
				r.NeverShown = append(r.NeverShown, now.Sub(l.at))
			}
		}
		r.Slowest = slices.Clone(w.slow)
		slices.SortFunc(r.Slowest, func(a, b slowLag) int { return cmp.Compare(b.Lag, a.Lag) })
		r.Slowest = r.Slowest[:min(len(r.Slowest), slowestKept)]
		done <- r
	}
	return <-done
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// rulesOf turns the population's budgets into the watcher's rules: none
// for systemNone, whose turn has no budget to check.
func rulesOf(scale *perfenv.Scale, system string) map[string]*rule {
	out := map[string]*rule{}
	switch system {
	case systemTDB:
		for _, t := range scale.TDBs {
			r := &rule{perZone: true, maxUnavailable: t.Spec.MaxUnavailable, minAvailable: t.Spec.MinAvailable}
			if t.Spec.MaxDisruptedDomains != nil {
				r.maxDisrupted = int(*t.Spec.MaxDisruptedDomains)
			}
			out[t.Namespace+"/"+t.Name] = r
		}
	case systemPDB:
		for _, p := range scale.EquivalentPDBs() {
			out[p.Namespace+"/"+p.Name] = &rule{maxUnavailable: p.Spec.MaxUnavailable, minAvailable: p.Spec.MinAvailable}
		}
	}
	return out
}

// percentile of sorted durations, in ms.
func percentileMS(d []time.Duration, q float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(q*float64(len(s)))) - 1
	i = min(max(i, 0), len(s)-1)
	return float64(s[i].Microseconds()) / 1000
}

var _ = client.ObjectKey{}
