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

// Package builders makes the objects the operator's tests start from (pods,
// nodes, the apps/v1 workloads and TopologyDisruptionBudgets) with fluent
// wrappers that every test tier shares, unit, integration and e2e alike:
//
//	builders.Pod("a-1").Namespace("ns").OnNode("n1").Ready().Obj()
//
// A constructor sets the name and nothing a test might not want; each setter
// states one fact, so a table row reads as what makes it special. A tier
// with defaults of its own (a namespace, a label) wraps a constructor in a
// one-line helper. Obj returns a deep copy: a wrapper can be kept as a base
// and changed further.
//
// The package imports only the API types and k8s.io packages, never the
// operator's own packages, so their in-package tests can use it without an
// import cycle.
package builders
