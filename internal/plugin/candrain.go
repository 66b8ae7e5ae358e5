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

package plugin

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/predict"
)

// DrainCheck is can-drain's answer (-o json, -o yaml).
type DrainCheck struct {
	TypeMeta `json:",inline"`
	Nodes    []string `json:"nodes"`
	// AllowedTogether says whether every pod can be evicted at once now.
	AllowedTogether bool `json:"allowedTogether"`
	// DrainErrors are the pods that would stop kubectl drain (with the same
	// flags) before it evicts anything.
	DrainErrors []string   `json:"drainErrors,omitempty"`
	Warnings    []string   `json:"warnings,omitempty"`
	Pods        []PodCheck `json:"pods"`
	// Together lists what refuses some pods when all go at once.
	Together TogetherCheck `json:"together"`
	// Verified says --verify confirmed every verdict with a server-side
	// dry-run eviction.
	Verified bool `json:"verified,omitempty"`
}

// TogetherCheck is the answer for all the pods at once.
type TogetherCheck struct {
	BlockedBy []predict.Block `json:"blockedBy"`
}

// PodCheck is the answer for one pod.
type PodCheck struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node"`
	// EvictableNow is what one eviction of the pod alone would get now.
	EvictableNow bool                `json:"evictableNow"`
	Reason       string              `json:"reason"`
	BlockedBy    []predict.Block     `json:"blockedBy"`
	Budgets      []predict.BudgetRef `json:"budgets"`
}

func podCheck(pod *corev1.Pod, v predict.Verdict) PodCheck {
	pc := PodCheck{Namespace: pod.Namespace, Name: pod.Name, Node: pod.Spec.NodeName, EvictableNow: v.Allowed,
		Reason: string(v.Reason), BlockedBy: v.Blocks, Budgets: v.Budgets}
	if pc.BlockedBy == nil {
		pc.BlockedBy = []predict.Block{}
	}
	if pc.Budgets == nil {
		pc.Budgets = []predict.BudgetRef{}
	}
	return pc
}

func newCanDrainCommand(o *options) *cobra.Command {
	var f drainFlags
	var verify bool
	cmd := &cobra.Command{
		Use:   "can-drain NODE... [--selector L] [kubectl drain's pod filters]",
		Short: "Can these nodes be drained now? Per pod, and all at once.",
		Long: `For every pod kubectl drain would evict from the nodes (with the same pod
filters), whether one eviction of it would be allowed now, and every
TopologyDisruptionBudget and PodDisruptionBudget covering it with its domain
and numbers; then whether all of them can be evicted at once.

Exit status: 0 when all can go now, 1 when some cannot (named), 2 on error.`,
		Example: `  kubectl tdb can-drain node-a1 node-a2 --ignore-daemonsets
  kubectl tdb can-drain -l cloud.google.com/gke-nodepool=old --ignore-daemonsets -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.checkOutput(); err != nil {
				return err
			}
			c, err := newClients(o.flags)
			if err != nil {
				return err
			}
			ds, err := o.gatherDrain(cmd.Context(), c, args, f)
			if err != nil {
				return err
			}
			check := canDrain(ds)
			if verify {
				disagree, err := verifyEvictions(cmd.Context(), c, ds.all(), check.Pods)
				if err != nil {
					return err
				}
				if len(disagree) > 0 {
					_ = o.print(check, func(w io.Writer) { printDrainCheck(w, check) })
					return &ExitError{Code: ExitFailed, Err: fmt.Errorf("the API server's dry-run evictions disagree with the prediction (a budget changed meanwhile, or a bug: please report it):\n  %s", strings.Join(disagree, "\n  "))}
				}
				check.Verified = true
			}
			if err := o.print(check, func(w io.Writer) { printDrainCheck(w, check) }); err != nil {
				return err
			}
			if !check.AllowedTogether || len(check.DrainErrors) > 0 {
				return answeredNo
			}
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&verify, "verify", false, "Confirm each pod's verdict with a server-side dry-run eviction (it consumes nothing); a disagreement is an error.")
	return cmd
}

// canDrain decides every pod alone, then all together.
func canDrain(ds *drainSet) DrainCheck {
	check := DrainCheck{TypeMeta: typeMeta("DrainCheck"), Nodes: ds.nodes, DrainErrors: ds.errors, Warnings: ds.warnings, Pods: []PodCheck{}}
	pods := ds.all()
	for _, p := range pods {
		check.Pods = append(check.Pods, podCheck(p, ds.snap.Decide(p)))
	}
	ok, blocks, _ := ds.snap.Together(pods)
	check.AllowedTogether = ok
	check.Together.BlockedBy = blocks
	if blocks == nil {
		check.Together.BlockedBy = []predict.Block{}
	}
	return check
}

// verifyEvictions sends a server-side dry-run eviction for each pod and
// lists the pods whose answer differs from the prediction.
func verifyEvictions(ctx context.Context, c *clients, pods []*corev1.Pod, checks []PodCheck) ([]string, error) {
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		disagree []string
		firstErr error
	)
	sem := make(chan struct{}, 16)
	for i, p := range pods {
		wg.Add(1)
		go func(p *corev1.Pod, want bool) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			err := c.kube.PolicyV1().Evictions(p.Namespace).Evict(ctx, &policyv1.Eviction{
				ObjectMeta:    metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name},
				DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}},
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil && isTransport(err) {
				if firstErr == nil {
					firstErr = explain(err, "create", "pods/eviction", "namespace "+p.Namespace)
				}
				return
			}
			if err != nil && webhookUnreachable(err) {
				if firstErr == nil {
					firstErr = fmt.Errorf("the API server cannot call the eviction webhook, so it refuses every eviction the webhook covers until the operator answers again (its failurePolicy is Fail): %w", err)
				}
				return
			}
			if forbidden(err) {
				if firstErr == nil {
					firstErr = explain(err, "create", "pods/eviction", "namespace "+p.Namespace)
				}
				return
			}
			if got := err == nil; got != want {
				answer := "allowed it"
				if err != nil {
					answer = "refused it: " + err.Error()
				}
				disagree = append(disagree, fmt.Sprintf("%s/%s: predicted evictable=%t, the API server %s", p.Namespace, p.Name, want, answer))
			}
		}(p, checks[i].EvictableNow)
	}
	wg.Wait()
	sort.Strings(disagree)
	return disagree, firstErr
}

func printDrainCheck(w io.Writer, check DrainCheck) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "NODE\tPOD\tEVICTABLE\tBUDGETS\tWHY NOT")
	for _, p := range check.Pods {
		ev := "yes"
		if !p.EvictableNow {
			ev = "no"
		}
		why := make([]string, 0, len(p.BlockedBy))
		for _, b := range p.BlockedBy {
			why = append(why, b.Message)
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%s\t%s\n", p.Node, p.Namespace, p.Name, ev, budgetsCell(p.Budgets), strings.Join(why, "; "))
	}
	_ = tw.Flush()
	for _, e := range check.DrainErrors {
		_, _ = fmt.Fprintf(w, "kubectl drain would stop: %s\n", e)
	}
	alone := 0
	for _, p := range check.Pods {
		if p.EvictableNow {
			alone++
		}
	}
	_, _ = fmt.Fprintf(w, "\n%d of %d pods can be evicted now, one at a time.\n", alone, len(check.Pods))
	if check.AllowedTogether {
		_, _ = fmt.Fprintf(w, "All %d can be evicted together: yes.\n", len(check.Pods))
	} else {
		_, _ = fmt.Fprintf(w, "All %d can be evicted together: no.\n", len(check.Pods))
		for _, b := range check.Together.BlockedBy {
			_, _ = fmt.Fprintf(w, "  %s: %s\n", b.Pod, blockLine(b))
		}
	}
	if check.Verified {
		_, _ = fmt.Fprintln(w, "Verified: server-side dry-run evictions agree with every verdict.")
	}
}

func budgetsCell(refs []predict.BudgetRef) string {
	if len(refs) == 0 {
		return "-"
	}
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = refCell(r)
	}
	return strings.Join(out, ", ")
}

func refCell(r predict.BudgetRef) string {
	kind := "tdb"
	if r.Kind == predict.KindPDB {
		kind = "pdb"
	}
	where := ""
	if r.Domain != "" {
		where = " " + r.Domain
	}
	s := fmt.Sprintf("%s/%s%s %d/%d healthy, keeps %d, allows %d", kind, r.Name, where, r.Healthy, r.Expected, r.Desired, r.Allowed)
	if r.NotEnforced {
		s += " (not enforced)"
	}
	if w := enforcementNote(r.Enforcement); w != "" {
		s += " (" + w + ")"
	}
	return s
}

// enforcementNote is how a budget's Enforced warning reads beside it.
func enforcementNote(reason string) string {
	switch reason {
	case policyv1alpha1.ReasonPartiallyEnforced:
		return "partially enforced"
	case policyv1alpha1.ReasonFailsOpen:
		return "fails open"
	}
	return ""
}

func blockLine(b predict.Block) string {
	if b.Hint != "" {
		return b.Message + " (" + b.Hint + ")"
	}
	return b.Message
}
