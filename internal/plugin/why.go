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

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tdb-operator/tdb-operator/internal/predict"
)

// EvictionCheck is why's answer (-o json, -o yaml).
type EvictionCheck struct {
	TypeMeta `json:",inline"`
	PodCheck `json:",inline"`
	// Hints say what would let the eviction through.
	Hints []string `json:"hints"`
}

func newWhyCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "why POD",
		Short: "Would an eviction of this pod be allowed now? If not, why, and what would change it.",
		Long: `The decision one eviction of the pod would get now, from every
TopologyDisruptionBudget and PodDisruptionBudget covering it, in the words of
the eviction webhook's (or the API server's) refusal, and what would change it.

Exit status: 0 when it would be allowed, 1 when refused, 2 on error.`,
		Example: `  kubectl tdb why ingester-zone-a-0 -n mimir`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.checkOutput(); err != nil {
				return err
			}
			ns, _, err := o.flags.ToRawKubeConfigLoader().Namespace()
			if err != nil {
				return err
			}
			c, err := newClients(o.flags)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			pod, err := c.kube.CoreV1().Pods(ns).Get(ctx, args[0], metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return &ExitError{Code: ExitFailed, Err: fmt.Errorf("pod %q not found in namespace %s", args[0], ns)}
			}
			if err != nil {
				return explain(err, "get", "pods", "namespace "+ns)
			}
			var nodes []corev1.Node
			if pod.Spec.NodeName != "" {
				n, err := c.kube.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
				switch {
				case apierrors.IsNotFound(err):
					// The node is gone: the decision says so.
				case err != nil:
					return explain(err, "get", "nodes", "the cluster")
				default:
					nodes = append(nodes, *n)
				}
			}
			tdbs, pdbs, err := c.budgets(ctx, []string{ns})
			if err != nil {
				return err
			}
			v := predict.NewSnapshot(nodes, tdbs, pdbs, o.now()).Decide(pod)
			check := EvictionCheck{TypeMeta: typeMeta("EvictionCheck"), PodCheck: podCheck(pod, v), Hints: []string{}}
			for _, b := range v.Blocks {
				if b.Hint != "" {
					check.Hints = append(check.Hints, b.Hint)
				}
			}
			if err := o.print(check, func(w io.Writer) { printWhy(w, check) }); err != nil {
				return err
			}
			if !v.Allowed {
				return answeredNo
			}
			return nil
		},
	}
}

func printWhy(w io.Writer, c EvictionCheck) {
	verdict := "would be allowed now"
	if !c.EvictableNow {
		verdict = "would be refused now"
	}
	_, _ = fmt.Fprintf(w, "Eviction of pod %s/%s (node %s) %s (%s).\n", c.Namespace, c.Name, orDash(c.Node), verdict, c.Reason)
	if len(c.Budgets) == 0 {
		_, _ = fmt.Fprintln(w, "No TopologyDisruptionBudget or PodDisruptionBudget covers it.")
	} else {
		_, _ = fmt.Fprintln(w, "Covered by:")
		for _, r := range c.Budgets {
			_, _ = fmt.Fprintf(w, "  %s\n", refCell(r))
		}
	}
	if len(c.BlockedBy) > 0 {
		_, _ = fmt.Fprintln(w, "Refused by:")
		for _, b := range c.BlockedBy {
			_, _ = fmt.Fprintf(w, "  %s\n", b.Message)
		}
	}
	if len(c.Hints) > 0 {
		_, _ = fmt.Fprintln(w, "What would change it:")
		for _, h := range c.Hints {
			_, _ = fmt.Fprintf(w, "  %s\n", h)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
