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
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
)

// clients talks to the API server for one command.
type clients struct {
	kube kubernetes.Interface
	// crs reads TopologyDisruptionBudgets.
	crs  client.Client
	host string
}

func newClients(flags *genericclioptions.ConfigFlags) (*clients, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	// Reads are few and listed, but a drain check of many nodes lists each
	// node's pods: let them go at once.
	cfg.QPS, cfg.Burst = 100, 300
	cfg.UserAgent = "kubectl-tdb/" + Version
	kcfg := rest.CopyConfig(cfg)
	kcfg.ContentType = "application/vnd.kubernetes.protobuf"
	kcfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	kube, err := kubernetes.NewForConfig(kcfg)
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := policyv1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	crs, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, explain(err, "reach", "the API server", cfg.Host)
	}
	return &clients{kube: kube, crs: crs, host: cfg.Host}, nil
}

// explain turns an API error into one a person can act on: what was
// refused (verb and resource), or that the API server cannot be reached.
func explain(err error, verb, resource, where string) error {
	if err == nil {
		return nil
	}
	var uerr *url.Error
	var nerr net.Error
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("not allowed to %s %s%s: %v; ask for the right to %s %s (see docs/kubectl-tdb.md, RBAC)", verb, resource, scope(where), reason(err), verb, resource)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the API server does not accept your credentials (%s %s): %v", verb, resource, reason(err))
	case errors.As(err, &uerr), errors.As(err, &nerr):
		return fmt.Errorf("cannot reach the API server: %w", err)
	}
	return fmt.Errorf("%s %s%s: %w", verb, resource, scope(where), err)
}

func scope(where string) string {
	if where == "" {
		return " in all namespaces"
	}
	return " in " + where
}

func reason(err error) string {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return s.Status().Message
	}
	return err.Error()
}

// nodes lists the nodes; one call.
func (c *clients) nodes(ctx context.Context, selector string) ([]corev1.Node, error) {
	l, err := c.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, explain(err, "list", "nodes", "the cluster")
	}
	return l.Items, nil
}

// budgets lists the TopologyDisruptionBudgets and PodDisruptionBudgets of
// the namespaces: one list across all namespaces each, or one per
// namespace when listing across all is not allowed.
func (c *clients) budgets(ctx context.Context, namespaces []string) ([]policyv1alpha1.TopologyDisruptionBudget, []policyv1.PodDisruptionBudget, error) {
	want := map[string]bool{}
	for _, ns := range namespaces {
		want[ns] = true
	}
	var tdbs []policyv1alpha1.TopologyDisruptionBudget
	var pdbs []policyv1.PodDisruptionBudget
	if len(namespaces) == 0 {
		return nil, nil, nil
	}
	listTDBs := func(ns string) error {
		var l policyv1alpha1.TopologyDisruptionBudgetList
		opts := []client.ListOption{}
		if ns != "" {
			opts = append(opts, client.InNamespace(ns))
		}
		if err := c.crs.List(ctx, &l, opts...); err != nil {
			return err
		}
		for _, t := range l.Items {
			if !want[t.Namespace] {
				continue
			}
			if err := budget.ExpandStatus(&t.Status); err != nil {
				return fmt.Errorf("TopologyDisruptionBudget %s/%s: %w", t.Namespace, t.Name, err)
			}
			tdbs = append(tdbs, t)
		}
		return nil
	}
	listPDBs := func(ns string) error {
		l, err := c.kube.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, p := range l.Items {
			if want[p.Namespace] {
				pdbs = append(pdbs, p)
			}
		}
		return nil
	}
	for _, l := range []struct {
		list     func(string) error
		resource string
	}{{listTDBs, "topologydisruptionbudgets.policy.tdb.dev"}, {listPDBs, "poddisruptionbudgets.policy"}} {
		err := errors.New("")
		if len(namespaces) > 1 {
			err = l.list("")
		}
		if err == nil {
			continue
		}
		if len(namespaces) > 1 && !apierrors.IsForbidden(err) {
			return nil, nil, explain(err, "list", l.resource, "")
		}
		for _, ns := range namespaces {
			if err := l.list(ns); err != nil {
				if apierrors.IsNotFound(err) || isNoMatch(err) {
					return nil, nil, fmt.Errorf("the TopologyDisruptionBudget API is not installed in this cluster (%w)", err)
				}
				return nil, nil, explain(err, "list", l.resource, "namespace "+ns)
			}
		}
	}
	return tdbs, pdbs, nil
}

func isNoMatch(err error) bool {
	return apimeta.IsNoMatchError(err)
}

// namespacesOf lists the pods' namespaces, sorted.
func namespacesOf(pods []*corev1.Pod) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range pods {
		if !seen[p.Namespace] {
			seen[p.Namespace] = true
			out = append(out, p.Namespace)
		}
	}
	sort.Strings(out)
	return out
}

// dsClient serves the drain library's DaemonSet lookups (one per
// DaemonSet pod) from one list of all DaemonSets, so that checking many
// nodes costs list calls, not a call per pod. When that list is not
// allowed, lookups go to the API server as kubectl drain's do.
type dsClient struct {
	kubernetes.Interface
	apps *dsApps
}

func newDSClient(kube kubernetes.Interface) *dsClient {
	return &dsClient{Interface: kube, apps: &dsApps{AppsV1Interface: kube.AppsV1(), kube: kube}}
}

func (c *dsClient) AppsV1() appsv1client.AppsV1Interface { return c.apps }

type dsApps struct {
	appsv1client.AppsV1Interface
	kube  kubernetes.Interface
	once  sync.Once
	byKey map[string]*appsv1.DaemonSet
}

func (a *dsApps) DaemonSets(ns string) appsv1client.DaemonSetInterface {
	return &dsGetter{DaemonSetInterface: a.AppsV1Interface.DaemonSets(ns), ns: ns, apps: a}
}

type dsGetter struct {
	appsv1client.DaemonSetInterface
	ns   string
	apps *dsApps
}

func (g *dsGetter) Get(ctx context.Context, name string, opts metav1.GetOptions) (*appsv1.DaemonSet, error) {
	a := g.apps
	a.once.Do(func() {
		l, err := a.kube.AppsV1().DaemonSets("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		a.byKey = make(map[string]*appsv1.DaemonSet, len(l.Items))
		for i := range l.Items {
			a.byKey[l.Items[i].Namespace+"/"+l.Items[i].Name] = &l.Items[i]
		}
	})
	if a.byKey == nil {
		return g.DaemonSetInterface.Get(ctx, name, opts)
	}
	if ds := a.byKey[g.ns+"/"+name]; ds != nil {
		return ds.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(appsv1.Resource("daemonsets"), name)
}

// isTransport says the request never got an answer from the API server.
func isTransport(err error) bool {
	var uerr *url.Error
	var nerr net.Error
	return errors.As(err, &uerr) || errors.As(err, &nerr)
}

// forbidden says the caller may not do what it asked.
func forbidden(err error) bool {
	return apierrors.IsForbidden(err) && !isWebhookRefusal(err)
}

// isWebhookRefusal says a 403 came from an admission webhook's refusal,
// not from RBAC.
func isWebhookRefusal(err error) bool {
	return strings.Contains(err.Error(), "admission webhook")
}

// webhookUnreachable says the API server could not get an answer from an
// admission webhook (failurePolicy Fail turns that into a refusal of
// every eviction it covers).
func webhookUnreachable(err error) bool {
	return strings.Contains(err.Error(), "failed calling webhook")
}
