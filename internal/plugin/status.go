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
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/predict"
)

// BudgetStatusList is status's answer (-o json, -o yaml).
type BudgetStatusList struct {
	TypeMeta `json:",inline"`
	Items    []predict.BudgetStatus `json:"items"`
}

func newStatusCommand(o *options) *cobra.Command {
	var allNamespaces bool
	cmd := &cobra.Command{
		Use:   "status [BUDGET] [-n NS | -A]",
		Short: "Per budget and domain: healthy/expected, allowed, waiting, evictions in flight, blocked since, rollout phase.",
		Example: `  kubectl tdb status -A
  kubectl tdb status ingesters -n mimir -o yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.checkOutput(); err != nil {
				return err
			}
			ns, _, err := o.flags.ToRawKubeConfigLoader().Namespace()
			if err != nil {
				return err
			}
			if allNamespaces {
				if len(args) > 0 {
					return &ExitError{Code: ExitFailed, Err: fmt.Errorf("name a budget or use --all-namespaces, not both")}
				}
				ns = ""
			}
			c, err := newClients(o.flags)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			var items []policyv1alpha1.TopologyDisruptionBudget
			if len(args) == 1 {
				var t policyv1alpha1.TopologyDisruptionBudget
				err := c.crs.Get(ctx, client.ObjectKey{Namespace: ns, Name: args[0]}, &t)
				if apierrors.IsNotFound(err) {
					return &ExitError{Code: ExitFailed, Err: fmt.Errorf("topologydisruptionbudget %q not found in namespace %s", args[0], ns)}
				}
				if err != nil {
					return explainCR(err, "get", ns)
				}
				items = append(items, t)
			} else {
				var l policyv1alpha1.TopologyDisruptionBudgetList
				if err := c.crs.List(ctx, &l, client.InNamespace(ns)); err != nil {
					return explainCR(err, "list", ns)
				}
				items = l.Items
			}
			for i := range items {
				if err := budget.ExpandStatus(&items[i].Status); err != nil {
					return fmt.Errorf("TopologyDisruptionBudget %s/%s: %w", items[i].Namespace, items[i].Name, err)
				}
			}
			list := BudgetStatusList{TypeMeta: typeMeta("BudgetStatusList"), Items: []predict.BudgetStatus{}}
			for i := range items {
				list.Items = append(list.Items, predict.StatusOf(&items[i]))
			}
			return o.print(list, func(w io.Writer) { printStatus(w, list, o.now()) })
		},
	}
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "Budgets of every namespace.")
	return cmd
}

func explainCR(err error, verb, ns string) error {
	if isNoMatch(err) {
		return fmt.Errorf("the TopologyDisruptionBudget API is not installed in this cluster (%w)", err)
	}
	where := "namespace " + ns
	if ns == "" {
		where = ""
	}
	return explain(err, verb, "topologydisruptionbudgets.policy.tdb.dev", where)
}

func printStatus(w io.Writer, l BudgetStatusList, now time.Time) {
	if len(l.Items) == 0 {
		_, _ = fmt.Fprintln(w, "No TopologyDisruptionBudgets found.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "NAMESPACE\tBUDGET\tALLOWED NOW\tSTATE\tDOMAIN\tHEALTHY\tDESIRED\tALLOWED\tWAITING\tIN FLIGHT\tBLOCKED FOR\tROLLOUT")
	for _, b := range l.Items {
		state := b.Reason
		if !b.Current {
			state += " (status behind spec)"
		}
		if w := enforcementNote(b.Enforcement); w != "" {
			state += " (" + w + ")"
		}
		head := fmt.Sprintf("%s\t%s\t%d\t%s", b.Namespace, b.Name, b.AllowedTogether, orDash(state))
		if len(b.Domains) == 0 {
			_, _ = fmt.Fprintf(tw, "%s\t-\t\t\t\t\t\t\t\t\n", head)
		}
		rows, healthy := listedDomains(b.Domains)
		for i, d := range rows {
			if i > 0 {
				head = "\t\t\t"
			}
			waiting, blocked := "-", "-"
			if d.Waiting {
				waiting = "yes"
			}
			if d.BlockedSince != nil {
				blocked = duration.HumanDuration(now.Sub(d.BlockedSince.Time))
			}
			_, _ = fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d\t%d\t%s\t%d\t%s\t%s\n", head, d.Name, d.Healthy, d.Expected, d.Desired, d.Allowed, waiting, d.InFlight, blocked, orDash(d.RolloutPhase))
		}
		if healthy > 0 {
			if len(rows) > 0 {
				head = "\t\t\t"
			}
			_, _ = fmt.Fprintf(tw, "%s\t(%d more at full health)\t\t\t\t\t\t\t\t\n", head, healthy)
		}
	}
	_ = tw.Flush()
	// The webhook decides these budgets' evictions, but may let some
	// through unchecked: the condition says what, and what to change.
	sep := "\n"
	for _, b := range l.Items {
		if b.Enforcement != "" {
			_, _ = fmt.Fprintf(w, "%sWarning: %s/%s is %s: %s\n", sep, b.Namespace, b.Name, b.Enforcement, b.EnforcementMessage)
			sep = ""
		}
	}
}

// listedDomains are the rows the table prints: every domain of a budget
// with at most budget.MaxListedDomains, as its status lists them; beyond,
// the domains not at full health (fewer healthy than expected, in flight,
// blocked, or in a rollout step), and how many others there are.
func listedDomains(all []predict.DomainStatus) (rows []predict.DomainStatus, healthy int) {
	if len(all) <= budget.MaxListedDomains {
		return all, 0
	}
	for _, d := range all {
		if d.Healthy == d.Expected && d.InFlight == 0 && d.BlockedSince == nil && (d.RolloutPhase == "" || d.RolloutPhase == string(policyv1alpha1.RolloutPhaseComplete)) {
			healthy++
			continue
		}
		rows = append(rows, d)
	}
	return rows, healthy
}
