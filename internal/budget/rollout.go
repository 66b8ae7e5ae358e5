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
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// DefaultProgressDeadline is how long a domain being updated may go without
// progress when spec.rollout.progressDeadlineSeconds is unset.
const DefaultProgressDeadline = 600 * time.Second

// DefaultSettle is how long a budget's driven workloads must stay unchanged
// (no new update revision, no workload newly handed over) before the
// operator evicts, when spec.rollout.settleSeconds is unset.
const DefaultSettle = 10 * time.Second

// maxStalledPodsNamed bounds the pods a stall message names.
const maxStalledPodsNamed = 5

// maxWorkloadsNamed bounds the workloads a condition message names.
const maxWorkloadsNamed = 5

// RolloutPod is a covered pod of a workload the operator updates.
type RolloutPod struct {
	// Name is the pod's name.
	Name string
	// Domain is the pod's failure domain.
	Domain string
	// Updated is true when the pod runs its workload's update revision.
	Updated bool
	// Ready is true when the pod is Running and Ready (IsHealthy).
	Ready bool
	// Deleting is true when the pod has a deletion timestamp.
	Deleting bool
	// Evicted is true when an eviction of the pod was granted (a record in
	// the budget's status, or an eviction the driver made that the status
	// does not show yet).
	Evicted bool
}

// RolloutInput is what the rollout driver knows about one budget.
type RolloutInput struct {
	// Spec is the budget's spec; Spec.Rollout is set.
	Spec *policyv1alpha1.TopologyDisruptionBudgetSpec
	// Budget is status.domains, with disruptionsAllowed already reduced by
	// evictions the status does not show yet.
	Budget []policyv1alpha1.DomainStatus
	// Pods are the covered pods of the driven workloads.
	Pods []RolloutPod
	// InFlight counts, per domain, granted evictions whose pods have not
	// been replaced yet: the budget's records, and evictions the driver made
	// that the status does not show yet. A domain with one is not complete.
	InFlight map[string]int32
	// Records counts, per domain, every eviction record of the budget,
	// whatever evicted the pod (a drain too): a domain with one is disrupted.
	Records map[string]int32
	// Previous is the rollout status last written, if any.
	Previous *policyv1alpha1.RolloutStatus
	// NewRevision is true when a driven workload's update revision changed
	// since Previous, or a workload was handed over to the budget: the
	// progress deadline restarts everywhere, and so does the settle window.
	NewRevision bool
	// OnDeleteWorkloads counts the covered OnDelete workloads, driven or
	// not. The settle window applies only to more than one: a single
	// workload's new revision covers all its pods at once, but several
	// workloads changed or handed over one after the other are not
	// outdated at once.
	OnDeleteWorkloads int
	// NotHandedOver names the covered OnDelete workloads that no budget may
	// update, as "StatefulSet db": their policy.tdb.dev/rollout-budget
	// annotation is missing or names no budget that may drive them.
	NotHandedOver []string
	// BudgetName is the budget's name, for the message that says how to
	// hand a workload over to it.
	BudgetName string
	// Now is the current time.
	Now time.Time
}

// StalledDomain is a domain whose progress deadline ran out.
type StalledDomain struct {
	Domain string
	// Pods are the domain's pods that are not updated and Ready (at most a
	// few).
	Pods []string
	// Missing is true when evicted pods of the domain have not been
	// replaced yet.
	Missing bool
	// Since is the last progress time.
	Since time.Time
}

// RolloutPlan is what the driver does now and reports.
type RolloutPlan struct {
	// Evict are the pods to evict now, in order.
	Evict []string
	// Status is the new rollout status, except Workloads, which the
	// controller fills in.
	Status policyv1alpha1.RolloutStatus
	// Conditions are RolloutProgressing and RolloutComplete.
	Conditions []metav1.Condition
	// Started are the domains whose update started in this pass.
	Started []string
	// Stalled are the domains that ran out of time in this pass or before.
	Stalled []StalledDomain
	// Complete is true when every driven pod is updated and Ready.
	Complete bool
	// Waiting names the other disrupted domains the current domain waits
	// for (DomainByDomain disrupts one domain at a time).
	Waiting []string
	// RecheckAt is when a progress deadline or the settle window runs out,
	// if one is running.
	RecheckAt *time.Time
	// SettleUntil, when set, is the end of the settle window: nothing is
	// evicted before it.
	SettleUntil *time.Time
}

// domainRollout is the state of one domain in a pass.
type domainRollout struct {
	name       string
	total      int32
	updated    int32 // updated and Ready, not deleting
	candidates []RolloutPod
	allowed    int32    // the budget's allowance
	free       int32    // not-Ready candidates the budget lets go without an allowance
	notDone    []string // pods not updated and Ready
	inFlight   bool     // a driven pod evicted and not replaced, deleting, or not Ready
	missing    bool     // a driven pod evicted and not replaced yet
}

// complete is true when every driven pod of the domain is updated and Ready
// and none is being replaced. Disruptions from other causes (a drain, a
// crash-looping pod of another workload) do not make a finished domain
// current again; they hold the next domain back instead.
func (d *domainRollout) complete() bool {
	return len(d.notDone) == 0 && !d.inFlight
}

// PlanRollout decides which outdated pods to evict now and reports progress,
// per spec.rollout:
//   - settleSeconds: while the budget covers several OnDelete workloads,
//     nothing is evicted and no domain starts until the driven workloads'
//     update revisions (and which workloads are driven) have stayed
//     unchanged that long, so that workloads updated one after the other
//     are all outdated before the order is applied.
//   - DomainByDomain: the first domain in rollout order that is not complete
//     is updated, as many pods at once as its allowance; later domains wait.
//     A domain whose update has started stays current until it is complete,
//     even when a domain before it gets outdated pods meanwhile (a workload
//     updated after the window): that domain follows.
//   - AllDomains: every domain is updated at once within its allowance; a
//     domain without unavailable pods starts only while fewer than
//     maxDisruptedDomains domains are disrupted.
//   - paused: nothing is evicted.
//   - a domain being updated that gains no updated Ready pod within the
//     progress deadline stalls the rollout: nothing more is evicted until it
//     progresses, the workload gets a new revision, or the rollout is paused
//     and resumed.
//
// Outdated pods that are not Ready go first: replacing them costs no healthy
// pod. Ties are broken by name.
func PlanRollout(in RolloutInput) RolloutPlan {
	ro := in.Spec.Rollout
	domains, order := rolloutDomains(in)
	plan := RolloutPlan{}
	plan.Status.LastRevisionChangeTime = lastRevisionChange(in)
	if len(order) == 0 {
		return noDrivenWorkloadsPlan(in, plan)
	}
	// The pass, the previous rows and the maps below stay on this stack: a
	// plan is made on every rollout reconcile.
	pass := rolloutPass{in: in, domains: domains, order: order}
	pass.prepare(plan.Status.LastRevisionChangeTime)
	prev := previousRows{}
	if in.Previous != nil {
		for _, d := range in.Previous.Domains {
			prev[d.Name] = d
		}
	}
	if pass.settling {
		plan.SettleUntil = pass.windowEnd
		plan.RecheckAt = pass.windowEnd
	}
	// Which domains are worked on in this pass, and how many pods each may
	// lose now.
	active, evict := map[string]bool{}, map[string]int32{}
	switch ro.Strategy {
	case policyv1alpha1.AllDomains:
		pass.selectAllDomains(prev, active, evict)
	default: // DomainByDomain
		pass.selectCurrentDomain(prev, &plan, active, evict)
	}
	stalled := false
	for _, name := range order {
		row, rowStalled := pass.domainStatus(name, prev, active[name], &plan)
		stalled = stalled || rowStalled
		plan.Status.Domains = append(plan.Status.Domains, row)
	}
	plan.Complete = true
	for _, name := range order {
		plan.Complete = plan.Complete && domains[name].complete()
	}
	if !ro.Paused && !stalled && !pass.settling {
		plan.Evict = pass.evictions(evict)
	}
	plan.Conditions = conditionsFor(&plan, in, ro.Paused, ro.Strategy)
	return plan
}

// noDrivenWorkloadsPlan is the plan of a budget that drives no workload:
// complete, unless covered OnDelete workloads are left to their owners.
func noDrivenWorkloadsPlan(in RolloutInput, plan RolloutPlan) RolloutPlan {
	plan.Complete = true
	plan.Conditions = rolloutConditions(metav1.ConditionFalse, policyv1alpha1.ReasonNoDrivenWorkloads,
		"no covered StatefulSet or DaemonSet uses updateStrategy OnDelete; ReplicaSets and Deployments are ordered through pod-deletion-cost", metav1.ConditionTrue)
	if len(in.NotHandedOver) > 0 {
		plan.Conditions = rolloutConditions(metav1.ConditionFalse, policyv1alpha1.ReasonWorkloadNotHandedOver,
			notHandedOverMessage(in), metav1.ConditionFalse)
	}
	return plan
}

// rolloutPass is what one PlanRollout pass knows of the domains with
// driven pods, in rollout order.
type rolloutPass struct {
	in       RolloutInput
	domains  map[string]*domainRollout
	order    []string
	deadline time.Duration
	// windowEnd is the end of the settle window, nil without one; settling
	// is true while it holds every eviction and every domain not started
	// back.
	windowEnd *time.Time
	settling  bool
}

// prepare sets the progress deadline and the settle window after the last
// revision change (lastChange).
func (p *rolloutPass) prepare(lastChange *metav1.Time) {
	p.deadline = DefaultProgressDeadline
	if s := p.in.Spec.Rollout.ProgressDeadlineSeconds; s != nil {
		p.deadline = time.Duration(*s) * time.Second
	}
	p.windowEnd = settleEnd(p.in, lastChange)
	p.settling = p.windowEnd != nil && p.in.Now.Before(*p.windowEnd)
}

// previousRows are the rows of the previous pass, by domain. They stay
// apart from rolloutPass so that the map lives on PlanRollout's stack.
type previousRows map[string]policyv1alpha1.RolloutDomainStatus

// started is true when the domain's update started in this wave and is not
// complete yet.
func (prev previousRows) started(name string) bool {
	d, seen := prev[name]
	return seen && startedPhase(d)
}

// selectAllDomains is AllDomains: every domain not complete is worked on,
// within its allowance; one without unavailable pods starts only while
// fewer than maxDisruptedDomains domains are disrupted, and none starts
// while the revisions settle. It marks the domains worked on in active,
// and how many pods each may lose now in evict.
func (p *rolloutPass) selectAllDomains(prev previousRows, active map[string]bool, evict map[string]int32) {
	disrupted := unavailableDomains(p.in, p.domains)
	count := int32(len(disrupted))
	for _, name := range p.order {
		d := p.domains[name]
		if d.complete() {
			continue
		}
		if p.settling && !prev.started(name) {
			continue // starts once the revisions have settled
		}
		if !disrupted[name] && p.in.Spec.MaxDisruptedDomains != nil && count >= *p.in.Spec.MaxDisruptedDomains {
			continue // waits for another domain to recover
		}
		active[name] = true
		if n := d.evictable(); n > 0 {
			evict[name] = n
			if !disrupted[name] {
				disrupted[name] = true
				count++
			}
		}
	}
}

// selectCurrentDomain is DomainByDomain: the current domain is worked on
// only while no other domain is disrupted (those are listed in
// plan.Waiting), and its deadline runs while its own pods are replaced.
// It marks the domain in active, and how many pods it may lose now in
// evict.
func (p *rolloutPass) selectCurrentDomain(prev previousRows, plan *RolloutPlan, active map[string]bool, evict map[string]int32) {
	disrupted := unavailableDomains(p.in, p.domains)
	name := currentDomain(p.in, p.domains, p.order, prev.started)
	if name == "" {
		return
	}
	plan.Status.CurrentDomain = name
	for _, other := range sortedKeys(disrupted) {
		if other != name {
			plan.Waiting = append(plan.Waiting, other)
		}
	}
	switch {
	case p.settling && !prev.started(name):
		// Starts once the revisions have settled: a workload updated
		// moments later may outdate a domain before it.
	case len(plan.Waiting) == 0:
		active[name] = true
		evict[name] = p.domains[name].evictable()
	case disrupted[name]:
		// Its own pods are being replaced: its deadline runs.
		active[name] = true
	}
}

// domainStatus reports one domain's phase and last progress time; stalled
// is true when its progress deadline ran out.
func (p *rolloutPass) domainStatus(name string, rows previousRows, active bool, plan *RolloutPlan) (row policyv1alpha1.RolloutDomainStatus, stalled bool) {
	paused := p.in.Spec.Rollout.Paused
	d := p.domains[name]
	row = policyv1alpha1.RolloutDomainStatus{Name: name, UpdatedPods: d.updated, TotalPods: d.total}
	prev, seen := rows[name]
	switch {
	case d.complete():
		row.Phase = policyv1alpha1.RolloutPhaseComplete
		if seen {
			row.LastProgressTime = prev.LastProgressTime
		}
	case paused && (active || name == plan.Status.CurrentDomain):
		row.Phase = policyv1alpha1.RolloutPhasePaused
		if rows.started(name) {
			// Only a domain that started keeps its time: it tells a domain
			// paused in the middle of its update from one paused before it
			// began.
			row.LastProgressTime = prev.LastProgressTime
		}
	case !active:
		row.Phase = policyv1alpha1.RolloutPhasePending
	case paused:
		row.Phase = policyv1alpha1.RolloutPhasePaused
		if rows.started(name) {
			row.LastProgressTime = prev.LastProgressTime
		}
	default:
		stalled = p.progress(&row, rows, plan)
	}
	return row, stalled
}

// progress reports a domain being updated: its deadline starts when its
// update starts or resumes, or a new revision came; it restarts when it
// gains an updated Ready pod. It returns true, and the domain stalls, when
// the deadline ran out; otherwise the plan is rechecked when it runs out.
func (p *rolloutPass) progress(row *policyv1alpha1.RolloutDomainStatus, rows previousRows, plan *RolloutPlan) (stalled bool) {
	d := p.domains[row.Name]
	prev, seen := rows[row.Name]
	row.Phase = policyv1alpha1.RolloutPhaseProgressing
	wasRunning := seen && (prev.Phase == policyv1alpha1.RolloutPhaseProgressing || prev.Phase == policyv1alpha1.RolloutPhaseStalled)
	switch {
	case !wasRunning || p.in.NewRevision || prev.LastProgressTime == nil:
		// Starting, resuming after a pause, or a new revision: the
		// deadline starts now.
		row.LastProgressTime = &metav1.Time{Time: p.in.Now}
		if !wasRunning && !rows.started(row.Name) {
			plan.Started = append(plan.Started, row.Name)
		}
	case d.updated > prev.UpdatedPods:
		row.LastProgressTime = &metav1.Time{Time: p.in.Now}
	default:
		row.LastProgressTime = prev.LastProgressTime
	}
	// The deadline does not run while the settle window holds every
	// eviction back.
	from := row.LastProgressTime.Time
	if p.windowEnd != nil && p.windowEnd.After(from) {
		from = *p.windowEnd
	}
	due := from.Add(p.deadline)
	if !p.in.Now.Before(due) {
		row.Phase = policyv1alpha1.RolloutPhaseStalled
		plan.Stalled = append(plan.Stalled, StalledDomain{
			Domain: row.Name, Pods: firstN(d.notDone, maxStalledPodsNamed), Missing: d.missing, Since: row.LastProgressTime.Time,
		})
		return true
	}
	if plan.RecheckAt == nil || due.Before(*plan.RecheckAt) {
		plan.RecheckAt = &due
	}
	return false
}

// evictions lists the pods to evict now: each domain's first candidates,
// as many as it may lose, in rollout order.
func (p *rolloutPass) evictions(evict map[string]int32) []string {
	var out []string
	for _, name := range p.order {
		for _, c := range p.domains[name].candidates[:evict[name]] {
			out = append(out, c.Name)
		}
	}
	return out
}

// startedPhase is true for a domain whose update started and is not
// complete: being updated, stalled, or paused after it started (a domain
// paused before it started has no lastProgressTime).
func startedPhase(d policyv1alpha1.RolloutDomainStatus) bool {
	switch d.Phase {
	case policyv1alpha1.RolloutPhaseProgressing, policyv1alpha1.RolloutPhaseStalled:
		return true
	case policyv1alpha1.RolloutPhasePaused:
		return d.LastProgressTime != nil
	}
	return false
}

// currentDomain is the domain DomainByDomain updates: the current domain of
// the previous pass if its update started and it is not complete, else the
// first domain in rollout order that is not complete; "" when every domain
// is complete. Keeping a started domain finishes it before another starts,
// even when a workload updated late outdates a domain earlier in the order.
func currentDomain(in RolloutInput, domains map[string]*domainRollout, order []string, started func(string) bool) string {
	if in.Previous != nil {
		if name := in.Previous.CurrentDomain; name != "" && started(name) {
			if d := domains[name]; d != nil && !d.complete() {
				return name
			}
		}
	}
	for _, name := range order {
		if !domains[name].complete() {
			return name
		}
	}
	return ""
}

// lastRevisionChange is when the driven workloads last changed (a new
// update revision, or a workload handed over): now when they changed since
// the previous pass, else as the previous pass reported it.
func lastRevisionChange(in RolloutInput) *metav1.Time {
	if in.NewRevision {
		return &metav1.Time{Time: in.Now}
	}
	if in.Previous != nil && in.Previous.LastRevisionChangeTime != nil {
		t := *in.Previous.LastRevisionChangeTime
		return &t
	}
	return nil
}

// settleEnd is the end of the settle window after the last revision
// change: that change plus spec.rollout.settleSeconds, while the budget
// drives more than one workload; nil without a window. The window may be
// over already.
func settleEnd(in RolloutInput, last *metav1.Time) *time.Time {
	settle := DefaultSettle
	if s := in.Spec.Rollout.SettleSeconds; s != nil {
		settle = time.Duration(*s) * time.Second
	}
	if last == nil || settle <= 0 || in.OnDeleteWorkloads < 2 {
		return nil
	}
	end := last.Add(settle)
	return &end
}

// notHandedOverMessage says which covered OnDelete workloads no budget
// updates, and how to hand one over to this budget.
func notHandedOverMessage(in RolloutInput) string {
	names := firstN(in.NotHandedOver, maxWorkloadsNamed)
	hint := ""
	if kind, name, ok := strings.Cut(in.NotHandedOver[0], " "); ok && in.BudgetName != "" {
		hint = fmt.Sprintf("; to let this budget update it: kubectl annotate %s %s %s=%s",
			strings.ToLower(kind), name, policyv1alpha1.RolloutBudgetAnnotation, in.BudgetName)
	}
	return fmt.Sprintf("not updated by the operator, as they name no budget that may update them in their %s annotation: %s%s",
		policyv1alpha1.RolloutBudgetAnnotation, strings.Join(names, ", "), hint)
}

// evictable is how many of the domain's outdated pods may go now: those not
// Ready that the budget's unhealthyPodEvictionPolicy lets go without an
// allowance, plus as many as the allowance.
func (d *domainRollout) evictable() int32 {
	return min(d.free+d.allowed, int32(len(d.candidates)))
}

// unavailableDomains are the domains with unavailable pods: short of healthy
// pods in the budget, with an eviction record (whatever evicted the pod), or
// with a driven pod being replaced.
func unavailableDomains(in RolloutInput, domains map[string]*domainRollout) map[string]bool {
	out := map[string]bool{}
	for _, row := range in.Budget {
		if row.CurrentHealthy < row.ExpectedPods {
			out[row.Name] = true
		}
	}
	for name, n := range in.Records {
		if n > 0 {
			out[name] = true
		}
	}
	for name, d := range domains {
		if d.inFlight {
			out[name] = true
		}
	}
	return out
}

// rolloutDomains groups the pods by domain and returns the domains that have
// driven pods, in rollout order.
func rolloutDomains(in RolloutInput) (map[string]*domainRollout, []string) {
	domains := map[string]*domainRollout{}
	for i := range in.Pods {
		p := in.Pods[i]
		d := domains[p.Domain]
		if d == nil {
			d = &domainRollout{name: p.Domain}
			domains[p.Domain] = d
		}
		d.total++
		switch {
		case p.Deleting || p.Evicted:
			d.inFlight = true
			d.notDone = append(d.notDone, p.Name)
		case p.Updated && p.Ready:
			d.updated++
		case p.Updated:
			// A replacement that is not Ready yet.
			d.inFlight = true
			d.notDone = append(d.notDone, p.Name)
		default:
			d.candidates = append(d.candidates, p)
			d.notDone = append(d.notDone, p.Name)
		}
	}
	for name, n := range in.InFlight {
		if n <= 0 {
			continue
		}
		if domains[name] == nil {
			// Every driven pod of the domain is gone: its replacements
			// have not been created yet.
			domains[name] = &domainRollout{name: name}
		}
		domains[name].inFlight = true
		domains[name].missing = true
	}
	for _, row := range in.Budget {
		d := domains[row.Name]
		if d == nil {
			continue
		}
		d.allowed = max(row.DisruptionsAllowed, 0)
		// As the webhook decides (policy/v1's rule): a pod that is not
		// Ready may go without an allowance under AlwaysAllow, or under
		// IfHealthyBudget while the domain is not short.
		if in.Spec.UnhealthyPodEvictionPolicy == policyv1alpha1.AlwaysAllow ||
			(row.CurrentHealthy >= row.DesiredHealthy && row.DesiredHealthy > 0) {
			for _, p := range d.candidates {
				if !p.Ready {
					d.free++
				}
			}
		}
	}
	names := make([]string, 0, len(domains))
	for name, d := range domains {
		sort.Slice(d.candidates, func(i, j int) bool {
			a, b := d.candidates[i], d.candidates[j]
			if a.Ready != b.Ready {
				return !a.Ready
			}
			return a.Name < b.Name
		})
		sort.Strings(d.notDone)
		names = append(names, name)
	}
	return domains, DomainOrder(in.Spec.Rollout, names)
}

func conditionsFor(plan *RolloutPlan, in RolloutInput, paused bool, strategy policyv1alpha1.RolloutStrategyType) []metav1.Condition {
	conds := rolloutProgressConditions(plan, paused, strategy)
	if len(in.NotHandedOver) == 0 {
		return conds
	}
	// Workloads left to their owners are named in every message; and a
	// rollout is not complete while some are.
	suffix := notHandedOverMessage(in)
	for i := range conds {
		conds[i].Message += "; " + suffix
	}
	if plan.Complete {
		return rolloutConditions(metav1.ConditionFalse, policyv1alpha1.ReasonWorkloadNotHandedOver, conds[0].Message, metav1.ConditionFalse)
	}
	return conds
}

func rolloutProgressConditions(plan *RolloutPlan, paused bool, strategy policyv1alpha1.RolloutStrategyType) []metav1.Condition {
	switch {
	case plan.Complete:
		return rolloutConditions(metav1.ConditionFalse, policyv1alpha1.ReasonRolloutComplete,
			"every driven pod runs its workload's update revision and is Ready", metav1.ConditionTrue)
	case len(plan.Stalled) > 0:
		s := plan.Stalled[0]
		pods := strings.Join(s.Pods, ", ")
		if s.Missing {
			pods = strings.Join(append(append([]string{}, s.Pods...), "evicted pods not replaced yet"), ", ")
		}
		msg := fmt.Sprintf("domain %s made no progress since %s: not updated and Ready: %s; the rollout stopped there. "+
			"Fix the workload (a new revision restarts the deadline) or set spec.rollout.paused to true and back to false to retry",
			s.Domain, s.Since.UTC().Format(time.RFC3339), pods)
		return rolloutConditions(metav1.ConditionFalse, policyv1alpha1.ReasonProgressDeadlineExceeded, msg, metav1.ConditionFalse)
	case paused:
		return rolloutConditions(metav1.ConditionFalse, policyv1alpha1.ReasonRolloutPaused,
			"spec.rollout.paused is true: no pod is evicted until it is set to false", metav1.ConditionFalse)
	case plan.SettleUntil != nil:
		msg := fmt.Sprintf("updating (%s): no pod is evicted before %s, %s after the driven workloads last changed (a new update revision or a workload handed over, at %s), "+
			"so that workloads updated one after the other are all outdated before domains are taken in order",
			strategyName(strategy), plan.SettleUntil.UTC().Format(time.RFC3339),
			plan.SettleUntil.Sub(plan.Status.LastRevisionChangeTime.Time).Round(time.Second), plan.Status.LastRevisionChangeTime.UTC().Format(time.RFC3339))
		if plan.Status.CurrentDomain != "" {
			msg += "; next: domain " + plan.Status.CurrentDomain
		}
		return rolloutConditions(metav1.ConditionTrue, policyv1alpha1.ReasonRolloutSettling, msg, metav1.ConditionFalse)
	}
	var parts []string
	for _, d := range plan.Status.Domains {
		if d.Phase == policyv1alpha1.RolloutPhaseProgressing {
			parts = append(parts, fmt.Sprintf("%s %d/%d", d.Name, d.UpdatedPods, d.TotalPods))
		}
	}
	msg := fmt.Sprintf("updating (%s): %s updated and Ready", strategyName(strategy), strings.Join(parts, ", "))
	if len(plan.Waiting) > 0 {
		msg = fmt.Sprintf("updating (%s): domain %s waits until domain(s) %s recover (DomainByDomain disrupts one domain at a time)",
			strategyName(strategy), plan.Status.CurrentDomain, strings.Join(plan.Waiting, ", "))
	}
	return rolloutConditions(metav1.ConditionTrue, policyv1alpha1.ReasonRolloutUpdating, msg, metav1.ConditionFalse)
}

func strategyName(s policyv1alpha1.RolloutStrategyType) string {
	if s == "" {
		return string(policyv1alpha1.DomainByDomain)
	}
	return string(s)
}

// NotEnforcedRolloutConditions are the rollout conditions of a budget in
// the operator's own namespace. The eviction webhook lets every eviction
// there pass (draining the operator's node must not deadlock), so such a
// budget protects nothing: the operator evicts nothing and sets no deletion
// cost for it, rather than drive a rollout no budget would bound.
func NotEnforcedRolloutConditions(namespace string) []metav1.Condition {
	msg := fmt.Sprintf("budgets in the operator's namespace %s are not enforced (the eviction webhook lets every eviction there pass): "+
		"the operator updates no workload and orders no scale-down for them; put the budget and its workloads in another namespace", namespace)
	return rolloutConditions(metav1.ConditionFalse, policyv1alpha1.ReasonNotEnforced, msg, metav1.ConditionFalse)
}

// rolloutConditions builds the two rollout conditions; the reason and
// message are shared, RolloutComplete gets its own status.
func rolloutConditions(progressing metav1.ConditionStatus, reason, msg string, complete metav1.ConditionStatus) []metav1.Condition {
	return []metav1.Condition{
		{Type: policyv1alpha1.ConditionRolloutProgressing, Status: progressing, Reason: reason, Message: msg},
		{Type: policyv1alpha1.ConditionRolloutComplete, Status: complete, Reason: reason, Message: msg},
	}
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(append([]string{}, s[:n]...), fmt.Sprintf("and %d more", len(s)-n))
	}
	return s
}
