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

// Package rbac flattens the operator's RBAC objects into grants (one verb on
// one resource, optionally one object name, in a ClusterRole or a Role) and
// compares them with the table of grants the operator is meant to have, so
// that a test fails as soon as a rule grows: a new verb, a new resource, a
// wildcard, a name restriction dropped, Secrets outside the operator's
// namespace or not named, or a binding to anything but the operator's own
// roles.
package rbac

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Objects are the RBAC objects of an install.
type Objects struct {
	ClusterRoles        []rbacv1.ClusterRole
	Roles               []rbacv1.Role
	ClusterRoleBindings []rbacv1.ClusterRoleBinding
	RoleBindings        []rbacv1.RoleBinding
	ServiceAccounts     []corev1.ServiceAccount
}

// Parse reads the RBAC objects (and ServiceAccounts) out of a multi-document
// YAML stream; other kinds are skipped.
func Parse(stream []byte, into *Objects) error {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading YAML: %w", err)
		}
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return fmt.Errorf("parsing YAML: %w", err)
		}
		var target any
		switch {
		case meta.APIVersion == "rbac.authorization.k8s.io/v1" && meta.Kind == "ClusterRole":
			into.ClusterRoles = append(into.ClusterRoles, rbacv1.ClusterRole{})
			target = &into.ClusterRoles[len(into.ClusterRoles)-1]
		case meta.APIVersion == "rbac.authorization.k8s.io/v1" && meta.Kind == "Role":
			into.Roles = append(into.Roles, rbacv1.Role{})
			target = &into.Roles[len(into.Roles)-1]
		case meta.APIVersion == "rbac.authorization.k8s.io/v1" && meta.Kind == "ClusterRoleBinding":
			into.ClusterRoleBindings = append(into.ClusterRoleBindings, rbacv1.ClusterRoleBinding{})
			target = &into.ClusterRoleBindings[len(into.ClusterRoleBindings)-1]
		case meta.APIVersion == "rbac.authorization.k8s.io/v1" && meta.Kind == "RoleBinding":
			into.RoleBindings = append(into.RoleBindings, rbacv1.RoleBinding{})
			target = &into.RoleBindings[len(into.RoleBindings)-1]
		case meta.APIVersion == "v1" && meta.Kind == "ServiceAccount":
			into.ServiceAccounts = append(into.ServiceAccounts, corev1.ServiceAccount{})
			target = &into.ServiceAccounts[len(into.ServiceAccounts)-1]
		case strings.HasPrefix(meta.APIVersion, "rbac.authorization.k8s.io/"):
			return fmt.Errorf("unexpected RBAC object %s %s", meta.APIVersion, meta.Kind)
		default:
			continue
		}
		if err := yaml.UnmarshalStrict(doc, target); err != nil {
			return fmt.Errorf("parsing %s: %w", meta.Kind, err)
		}
	}
}

// Row is one line of the RBAC table: verbs on a resource in a role kind,
// optionally restricted to object names.
type Row struct {
	// Kind is ClusterRole or Role.
	Kind     string
	Group    string
	Resource string
	// Names restrict the rule to these objects; empty: every object.
	Names string
	// Verbs, comma-separated, sorted.
	Verbs string
}

// grant is one verb on one resource (and one name, or all).
type grant struct{ kind, group, resource, name, verb string }

func expand(kind string, rules []rbacv1.PolicyRule) []grant {
	var out []grant
	for _, r := range rules {
		names := r.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, n := range names {
					for _, v := range r.Verbs {
						out = append(out, grant{kind, g, res, n, v})
					}
				}
			}
		}
	}
	return out
}

func expandRows(rows []Row) []grant {
	var out []grant
	for _, r := range rows {
		names := []string{""}
		if r.Names != "" {
			names = strings.Split(r.Names, ",")
		}
		for _, n := range names {
			for _, v := range strings.Split(r.Verbs, ",") {
				out = append(out, grant{r.Kind, r.Group, r.Resource, n, v})
			}
		}
	}
	return out
}

// Table is the objects' rules as rows, one per role kind, group, resource
// and name restriction, sorted.
func (o *Objects) Table() []Row {
	var grants []grant
	for _, cr := range o.ClusterRoles {
		grants = append(grants, expand("ClusterRole", cr.Rules)...)
	}
	for _, r := range o.Roles {
		grants = append(grants, expand("Role", r.Rules)...)
	}
	type key struct{ kind, group, resource, name string }
	verbs := map[key][]string{}
	for _, g := range grants {
		k := key{g.kind, g.group, g.resource, g.name}
		if !slices.Contains(verbs[k], g.verb) {
			verbs[k] = append(verbs[k], g.verb)
		}
	}
	var rows []Row
	for k, v := range verbs {
		sort.Strings(v)
		rows = append(rows, Row{Kind: k.kind, Group: k.group, Resource: k.resource, Names: k.name, Verbs: strings.Join(v, ",")})
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		return a.Names < b.Names
	})
	return rows
}

// Format renders rows as a Markdown table.
func Format(rows []Row) string {
	var b strings.Builder
	b.WriteString("| role | apiGroup | resource | resourceNames | verbs |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		group := r.Group
		if group == "" {
			group = `""`
		}
		names := r.Names
		if names == "" {
			names = "(all)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.Kind, group, r.Resource, names, r.Verbs)
	}
	return b.String()
}

// Check compares the objects' rules with the expected rows and checks the
// invariants no table entry may break. namespace, when set, is where every
// Role, RoleBinding and ServiceAccount must be (an installed build); the
// raw config/rbac files leave that to kustomize.
func (o *Objects) Check(expected []Row, namespace string) []string {
	var problems []string
	want := map[grant]bool{}
	for _, g := range expandRows(expected) {
		want[g] = true
	}
	got := map[grant]bool{}
	for _, cr := range o.ClusterRoles {
		if cr.AggregationRule != nil {
			problems = append(problems, fmt.Sprintf("ClusterRole %s aggregates other roles", cr.Name))
		}
		for _, g := range expand("ClusterRole", cr.Rules) {
			got[g] = true
		}
		for _, r := range cr.Rules {
			if len(r.NonResourceURLs) > 0 {
				problems = append(problems, fmt.Sprintf("ClusterRole %s grants non-resource URLs %v", cr.Name, r.NonResourceURLs))
			}
		}
	}
	for _, r := range o.Roles {
		for _, g := range expand("Role", r.Rules) {
			got[g] = true
		}
		if namespace != "" && r.Namespace != namespace {
			problems = append(problems, fmt.Sprintf("Role %s is in namespace %q, not the operator's %q", r.Name, r.Namespace, namespace))
		}
	}
	for g := range got {
		switch {
		case g.verb == "*":
			problems = append(problems, fmt.Sprintf("%s grants every verb on %s", g.kind, describe(g)))
		case (g.group == "*" || strings.Contains(g.resource, "*")) && (g.group != "*" || g.resource != "*/scale" || g.verb != "get" || g.name != ""):
			problems = append(problems, fmt.Sprintf("%s grants %s on a wildcard %s (only get on */scale may be a wildcard)", g.kind, g.verb, describe(g)))
		case g.resource == "secrets" && g.kind != "Role":
			problems = append(problems, fmt.Sprintf("%s grants %s on secrets: secrets only in a Role of the operator's namespace", g.kind, g.verb))
		case g.resource == "secrets" && g.name == "":
			problems = append(problems, fmt.Sprintf("%s grants %s on every Secret of its namespace: only the webhook certificate Secret, by name", g.kind, g.verb))
		}
		if !want[g] {
			problems = append(problems, fmt.Sprintf("broader than the table: %s grants %s on %s", g.kind, g.verb, describe(g)))
		}
	}
	for g := range want {
		if !got[g] {
			problems = append(problems, fmt.Sprintf("missing from the roles (update the table if it was dropped on purpose): %s %s on %s", g.kind, g.verb, describe(g)))
		}
	}
	problems = append(problems, o.checkBindings(namespace)...)
	sort.Strings(problems)
	return problems
}

func describe(g grant) string {
	s := fmt.Sprintf("%s %q", g.resource, g.group)
	if g.name != "" {
		s += fmt.Sprintf(" named %s", g.name)
	}
	return s
}

// checkBindings: bindings give the operator's roles to the operator's
// ServiceAccount, and nothing else to anyone else.
func (o *Objects) checkBindings(namespace string) []string {
	var problems []string
	accounts := map[string]bool{}
	for _, sa := range o.ServiceAccounts {
		accounts[sa.Name] = true
		if namespace != "" && sa.Namespace != namespace {
			problems = append(problems, fmt.Sprintf("ServiceAccount %s is in namespace %q, not %q", sa.Name, sa.Namespace, namespace))
		}
	}
	clusterRoles, roles := map[string]bool{}, map[string]bool{}
	for _, cr := range o.ClusterRoles {
		clusterRoles[cr.Name] = true
	}
	for _, r := range o.Roles {
		roles[r.Name] = true
	}
	checkSubjects := func(binding string, subjects []rbacv1.Subject) {
		for _, s := range subjects {
			if s.Kind != rbacv1.ServiceAccountKind || !accounts[s.Name] || (namespace != "" && s.Namespace != namespace) {
				problems = append(problems, fmt.Sprintf("%s binds %s %s/%s, not the operator's ServiceAccount", binding, s.Kind, s.Namespace, s.Name))
			}
		}
	}
	for _, b := range o.ClusterRoleBindings {
		if b.RoleRef.Kind != "ClusterRole" || !clusterRoles[b.RoleRef.Name] {
			problems = append(problems, fmt.Sprintf("ClusterRoleBinding %s refers to %s %s, not a role of the install", b.Name, b.RoleRef.Kind, b.RoleRef.Name))
		}
		checkSubjects("ClusterRoleBinding "+b.Name, b.Subjects)
	}
	for _, b := range o.RoleBindings {
		if b.RoleRef.Kind != "Role" || !roles[b.RoleRef.Name] {
			problems = append(problems, fmt.Sprintf("RoleBinding %s refers to %s %s, not a Role of the install", b.Name, b.RoleRef.Kind, b.RoleRef.Name))
		}
		if namespace != "" && b.Namespace != namespace {
			problems = append(problems, fmt.Sprintf("RoleBinding %s is in namespace %q, not %q", b.Name, b.Namespace, namespace))
		}
		checkSubjects("RoleBinding "+b.Name, b.Subjects)
	}
	if len(o.ServiceAccounts) != 1 {
		problems = append(problems, fmt.Sprintf("want exactly one ServiceAccount, got %d", len(o.ServiceAccounts)))
	}
	return problems
}
