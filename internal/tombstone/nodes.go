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

// Package tombstone remembers the last labels of deleted nodes. A pod bound
// to a node that is gone (autoscaler scale-down, node replacement) lingers
// until pod garbage collection deletes it, forever with a finalizer; its
// node's last labels tell which failure domain it was in.
package tombstone

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

const (
	// DefaultTTL is how long a deleted node's labels are kept: well past
	// pod garbage collection of its pods (about a minute).
	DefaultTTL = time.Hour
	// DefaultMaxEntries bounds the memory: past it the oldest go first.
	DefaultMaxEntries = 10000
)

// Nodes holds the last labels of recently deleted nodes. It is safe for
// concurrent use; the zero value is not: use New.
type Nodes struct {
	clock      clock.PassiveClock
	ttl        time.Duration
	maxEntries int

	mu      sync.Mutex
	entries map[string]entry
}

type entry struct {
	labels    map[string]string
	deletedAt time.Time
}

// New returns an empty registry with the default bounds.
func New(clk clock.PassiveClock) *Nodes {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Nodes{clock: clk, ttl: DefaultTTL, maxEntries: DefaultMaxEntries, entries: map[string]entry{}}
}

// Deleted records a node's deletion with its last labels.
func (n *Nodes) Deleted(node *corev1.Node) {
	now := n.clock.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.expire(now)
	if len(n.entries) >= n.maxEntries {
		oldest, at := "", now
		for name, e := range n.entries {
			if !e.deletedAt.After(at) {
				oldest, at = name, e.deletedAt
			}
		}
		delete(n.entries, oldest)
	}
	labels := make(map[string]string, len(node.Labels))
	for k, v := range node.Labels {
		labels[k] = v
	}
	n.entries[node.Name] = entry{labels: labels, deletedAt: now}
}

// Exists forgets a node that exists (again) under that name.
func (n *Nodes) Exists(name string) {
	n.mu.Lock()
	delete(n.entries, name)
	n.mu.Unlock()
}

// Labels returns the last labels of a node deleted within the TTL.
func (n *Nodes) Labels(name string) (map[string]string, bool) {
	if n == nil {
		return nil, false
	}
	now := n.clock.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	e, ok := n.entries[name]
	if !ok || now.Sub(e.deletedAt) > n.ttl {
		return nil, false
	}
	return e.labels, true
}

// Len is the number of nodes remembered.
func (n *Nodes) Len() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.entries)
}

func (n *Nodes) expire(now time.Time) {
	for name, e := range n.entries {
		if now.Sub(e.deletedAt) > n.ttl {
			delete(n.entries, name)
		}
	}
}

// Watch feeds the registry from the cache's node informer.
func (n *Nodes) Watch(ctx context.Context, c cache.Cache) error {
	inf, err := c.GetInformer(ctx, &corev1.Node{})
	if err != nil {
		return fmt.Errorf("getting the node informer: %w", err)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if node, ok := obj.(*corev1.Node); ok {
				n.Exists(node.Name)
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if node, ok := obj.(*corev1.Node); ok {
				n.Deleted(node)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watching node deletions: %w", err)
	}
	return nil
}
