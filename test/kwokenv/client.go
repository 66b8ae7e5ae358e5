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

package kwokenv

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// NewClient is a client for the cluster of kubeconfig that knows the core
// types, TopologyDisruptionBudgets and the types more adds, with room for
// bursts of requests.
func NewClient(kubeconfig string, more ...func(*runtime.Scheme) error) (client.Client, error) {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme, policyv1alpha1.AddToScheme}, more...) {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// NewClientset is a clientset for the cluster of kubeconfig, with
// NewClient's room for bursts.
func NewClientset(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 200, 400
	return cfg, nil
}
