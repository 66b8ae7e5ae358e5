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
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tdb-operator/tdb-operator/internal/predict"
)

// DrainPlan is plan's answer (-o json, -o yaml).
type DrainPlan struct {
	TypeMeta     `json:",inline"`
	predict.Plan `json:",inline"`
	// Nodes is how many nodes were planned.
	Nodes int `json:"nodes"`
	// DrainErrors are the pods that would stop kubectl drain.
	DrainErrors []string `json:"drainErrors,omitempty"`
}

func newPlanCommand(o *options) *cobra.Command {
	var f drainFlags
	var zoneKey string
	cmd := &cobra.Command{
		Use:   "plan NODE... [--selector L] [kubectl drain's pod filters]",
		Short: "An order to drain nodes: waves that can each be drained at once without a refusal.",
		Long: `Waves of nodes that can each be drained concurrently with no eviction refused,
assuming each wave's pods are Ready again elsewhere before the next wave
starts. Cordon every planned node first (kubectl cordon), so that the
replacements land on other nodes, and wait between waves until
kubectl tdb can-drain on the next wave exits 0.

The packing is greedy first-fit over the nodes sorted by zone, then name:
never more waves than draining one node at a time. See docs/kubectl-tdb.md.

Exit status: 0 when every node is in a wave, 1 when some node cannot be
drained now even alone (listed), 2 on error.`,
		Example: `  kubectl tdb plan -l pool=old --ignore-daemonsets --delete-emptydir-data`,
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
			nodes := make([]predict.NodePods, len(ds.nodes))
			for i, n := range ds.nodes {
				nodes[i] = predict.NodePods{Node: n, Pods: ds.pods[n]}
			}
			plan := DrainPlan{TypeMeta: typeMeta("DrainPlan"), Plan: ds.snap.PlanDrain(nodes, zoneKey), Nodes: len(nodes), DrainErrors: ds.errors}
			if plan.Waves == nil {
				plan.Waves = []predict.Wave{}
			}
			if err := o.print(plan, func(w io.Writer) { printPlan(w, plan) }); err != nil {
				return err
			}
			if len(plan.Blocked) > 0 || len(plan.DrainErrors) > 0 {
				return answeredNo
			}
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&zoneKey, "zone-key", "topology.kubernetes.io/zone", "Node label the nodes are grouped by before packing.")
	return cmd
}

func printPlan(w io.Writer, p DrainPlan) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "WAVE\tNODES\tPODS\tBOUND BY")
	for i, wave := range p.Waves {
		bound := "-"
		if len(wave.BoundBy) > 0 {
			var names []string
			for _, b := range wave.BoundBy {
				s := fmt.Sprintf("%s %s/%s", shortKind(b.Kind), b.Namespace, b.Name)
				if b.Domain != "" {
					s += " (" + b.Domain + ")"
				}
				names = append(names, s)
			}
			bound = strings.Join(names, ", ")
		}
		_, _ = fmt.Fprintf(tw, "%d\t%s\t%d\t%s\n", i+1, strings.Join(wave.Nodes, ","), wave.Pods, bound)
	}
	_ = tw.Flush()
	drainable := p.Nodes - len(p.Blocked)
	_, _ = fmt.Fprintf(w, "\n%d wave(s) for %d node(s) (one node at a time: %d).\n", len(p.Waves), drainable, drainable)
	for _, b := range p.Blocked {
		_, _ = fmt.Fprintf(w, "Cannot be drained now, even alone: %s\n", b.Node)
		for _, x := range b.BlockedBy {
			_, _ = fmt.Fprintf(w, "  %s: %s\n", x.Pod, blockLine(x))
		}
	}
	for _, e := range p.DrainErrors {
		_, _ = fmt.Fprintf(w, "kubectl drain would stop: %s\n", e)
	}
	if len(p.Waves) > 1 {
		_, _ = fmt.Fprintln(w, "Cordon every planned node first; before each wave, wait until kubectl tdb can-drain on its nodes exits 0.")
	}
}

func shortKind(kind string) string {
	if kind == predict.KindPDB {
		return "pdb"
	}
	return "tdb"
}
