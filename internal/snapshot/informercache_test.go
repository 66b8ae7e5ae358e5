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

package snapshot

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// informerCache starts controller-runtime's informer cache, with the
// operator's CacheOptions, over the given pods and nodes instead of an API
// server: the reader, transforms and indexes the controllers' snapshots
// read in production, without envtest. It returns a gatherer reading it
// and, when labelIndex, through LabelIndex.
func informerCache(tb testing.TB, labelIndex bool, pods []*corev1.Pod, nodes []*corev1.Node) *Gatherer {
	tb.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		tb.Fatal(err)
	}
	if err := policyv1alpha1.AddToScheme(s); err != nil {
		tb.Fatal(err)
	}
	opts := CacheOptions()
	// Every kind the options name is namespaced but nodes.
	mapper := meta.NewDefaultRESTMapper(nil)
	for obj := range opts.ByObject {
		gvk, err := apiutil.GVKForObject(obj, s)
		if err != nil {
			tb.Fatal(err)
		}
		scope := meta.RESTScopeNamespace
		if _, ok := obj.(*corev1.Node); ok {
			scope = meta.RESTScopeRoot
		}
		mapper.Add(gvk, scope)
	}
	podList := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for _, p := range pods {
		podList.Items = append(podList.Items, *p.DeepCopy())
	}
	nodeList := &corev1.NodeList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for _, n := range nodes {
		nodeList.Items = append(nodeList.Items, *n.DeepCopy())
	}
	opts.Scheme, opts.Mapper = s, mapper
	opts.NewInformer = func(_ toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		var list runtime.Object
		switch obj.(type) {
		case *corev1.Pod:
			list = podList
		case *corev1.Node:
			list = nodeList
		default:
			panic(fmt.Sprintf("no objects of %T", obj))
		}
		return toolscache.NewSharedIndexInformer(fixedListWatch{list: list}, obj, resync, indexers)
	}
	// Never dialled: the informers list and watch fixedListWatch.
	c, err := cache.New(&rest.Config{Host: "http://127.0.0.1:1"}, opts)
	if err != nil {
		tb.Fatal(err)
	}
	g := &Gatherer{Cache: c}
	if labelIndex {
		if err := IndexPodsByLabel(indexerOnly{indexer: c}, g); err != nil {
			tb.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	for _, obj := range []client.Object{&corev1.Pod{}, &corev1.Node{}} {
		if _, err := c.GetInformer(ctx, obj); err != nil {
			tb.Fatal(err)
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		tb.Fatal("the informer cache did not sync")
	}
	return g
}

// fixedListWatch lists a fixed list and watches no change.
type fixedListWatch struct{ list runtime.Object }

func (lw fixedListWatch) List(metav1.ListOptions) (runtime.Object, error) {
	// A copy: the cache's transforms strip what they are given.
	return lw.list.DeepCopyObject(), nil
}

func (fixedListWatch) Watch(metav1.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}

// IsWatchListSemanticsUnSupported has the reflector list, then watch.
func (fixedListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// indexerOnly is a manager that only has a field indexer.
type indexerOnly struct {
	ctrl.Manager
	indexer client.FieldIndexer
}

func (m indexerOnly) GetFieldIndexer() client.FieldIndexer { return m.indexer }
