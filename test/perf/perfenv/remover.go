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

package perfenv

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// ExternalPodRemoval is the hack/cluster/up.sh setting that leaves the end
// of pod deletions to a PodRemover instead of kwok's pod-remove Stage.
const ExternalPodRemoval = "POD_REMOVAL=external"

// PodRemover ends the deletion of the pods on the cluster's nodes as a
// kubelet does: a pod with a deletionTimestamp loses its finalizers and is
// deleted with a zero grace period, both conditional on its UID. kwok
// deletes by name, so under load a late delete of a pod that is already
// gone removes its StatefulSet replacement; a delete pinned to the UID
// cannot (see hack/cluster/stages/pod-remove.yaml).
type PodRemover struct {
	queue workqueue.TypedRateLimitingInterface[podRef]
	store cache.Store
	// Removed counts the pods it deleted; Missed the deletes that found the
	// name held by another pod or by none.
	Removed, Missed atomic.Int64

	mu sync.Mutex
	// seen: when each pod being deleted was first seen (its deletion's
	// start, as the remover's cache shows it); took: from then to the
	// remover's delete answered, for the pods it deleted since the last
	// TakeRemovalTimes.
	seen map[types.UID]time.Time
	took []time.Duration
}

// zeroGraceRecheck is how long a pod deleted with a zero grace period is
// left to the API server before the remover deletes it too.
const zeroGraceRecheck = 2 * time.Second

type podRef struct {
	namespace, name string
	uid             types.UID
}

// StartPodRemover starts a PodRemover for the cluster of kubeconfig with
// workers deleting in parallel; it stops with ctx. The cluster must run
// with ExternalPodRemoval, or kwok removes the pods too.
func StartPodRemover(ctx context.Context, kubeconfig string, workers int) (*PodRemover, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 500, 1000
	cfg.UserAgent = "tdb-pod-remover"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	pods := factory.Core().V1().Pods().Informer()
	r := &PodRemover{queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[podRef]()),
		store: pods.GetStore(), seen: map[types.UID]time.Time{}}
	enqueue := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.DeletionTimestamp == nil || p.Spec.NodeName == "" {
			return
		}
		ref := podRef{namespace: p.Namespace, name: p.Name, uid: p.UID}
		r.mu.Lock()
		if _, ok := r.seen[p.UID]; !ok {
			r.seen[p.UID] = time.Now()
		}
		r.mu.Unlock()
		if ptr.Deref(p.DeletionGracePeriodSeconds, 1) == 0 && len(p.Finalizers) == 0 {
			// A zero-grace delete with no finalizers is being completed by
			// the API server (this event is its first write): look again
			// later, in case its second write failed and left the pod.
			r.queue.AddAfter(ref, zeroGraceRecheck)
			return
		}
		r.queue.Add(ref)
	}
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced) {
		return nil, fmt.Errorf("pod remover: the pod cache did not sync")
	}
	for range workers {
		go func() {
			for r.next(ctx, cs) {
			}
		}()
	}
	go func() {
		<-ctx.Done()
		r.queue.ShutDown()
	}()
	return r, nil
}

func (r *PodRemover) next(ctx context.Context, cs kubernetes.Interface) bool {
	ref, quit := r.queue.Get()
	if quit {
		return false
	}
	defer r.queue.Done(ref)
	if err := r.remove(ctx, cs, ref); err != nil && ctx.Err() == nil {
		r.queue.AddRateLimited(ref)
		return true
	}
	r.queue.Forget(ref)
	return true
}

// remove drops ref's finalizers and deletes it, each only while ref's name
// holds ref's UID.
func (r *PodRemover) remove(ctx context.Context, cs kubernetes.Interface, ref podRef) error {
	pods := cs.CoreV1().Pods(ref.namespace)
	obj, ok, _ := r.store.GetByKey(ref.namespace + "/" + ref.name)
	if !ok || obj.(*corev1.Pod).UID != ref.uid {
		// The cache saw it go: nothing to ask the API server.
		r.done(ref, false)
		return nil
	}
	if len(obj.(*corev1.Pod).Finalizers) > 0 {
		if err := dropFinalizers(ctx, pods, ref); err != nil {
			return err
		}
	}
	err := pods.Delete(ctx, ref.name, metav1.DeleteOptions{GracePeriodSeconds: new(int64),
		Preconditions: &metav1.Preconditions{UID: &ref.uid}})
	switch {
	case err == nil:
		r.Removed.Add(1)
		r.done(ref, true)
		return nil
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		// Gone, or the name holds another pod now (the precondition).
		r.Missed.Add(1)
		r.done(ref, false)
		return nil
	default:
		return err
	}
}

// done forgets when ref was first seen, and if the remover deleted it,
// keeps how long that took.
func (r *PodRemover) done(ref podRef, deleted bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if at, ok := r.seen[ref.uid]; ok {
		if deleted {
			r.took = append(r.took, time.Since(at))
		}
		delete(r.seen, ref.uid)
	}
}

// TakeRemovalTimes returns, for each pod the remover deleted since the last
// call, the time from its cache first showing the pod's deletion to the API
// server answering the remover's delete: how long a pod waited for the
// remover once its cache showed the deletion (the remover's queue, its
// workers, the API server). The time the deletion took to reach the cache
// is not counted.
func (r *PodRemover) TakeRemovalTimes() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	took := r.took
	r.took = nil
	return took
}

// dropFinalizers removes ref's finalizers while its name holds its UID.
func dropFinalizers(ctx context.Context, pods corev1client.PodInterface, ref podRef) error {
	// A JSON patch whose test fails changes nothing (422): another pod
	// holds the name.
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": ref.uid},
		{"op": "remove", "path": "/metadata/finalizers"},
	})
	if err != nil {
		return err
	}
	_, err = pods.Patch(ctx, ref.name, types.JSONPatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		// Gone, or another pod holds the name, or no finalizers are left:
		// the delete's precondition decides.
		return nil
	}
	return err
}
