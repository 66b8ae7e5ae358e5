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

package rbac

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// config/rbac as kustomize takes it (the files its kustomization lists),
// compared with the table. test/install checks the built install the same
// way, namespaces and names included.
func TestConfigRBACMatchesTheTable(t *testing.T) {
	dir := filepath.Join("..", "..", "config", "rbac")
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(raw, &k); err != nil {
		t.Fatal(err)
	}
	var objs Objects
	for _, f := range k.Resources {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := Parse(b, &objs); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	t.Logf("RBAC of config/rbac:\n%s", Format(objs.Table()))
	if problems := objs.Check(Expected, ""); len(problems) > 0 {
		t.Errorf("config/rbac differs from the expected table:\n  %s", strings.Join(problems, "\n  "))
	}
}

// The checker itself: each way a role can grow is caught.
func TestCheckCatchesBroaderGrants(t *testing.T) {
	base := `
apiVersion: v1
kind: ServiceAccount
metadata: {name: operator, namespace: tdb-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: b}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: r}
subjects: [{kind: ServiceAccount, name: operator, namespace: tdb-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: r}
rules:
`
	expected := []Row{
		{Kind: "ClusterRole", Group: "", Resource: "pods", Verbs: "get,list"},
		{Kind: "ClusterRole", Group: "*", Resource: "*/scale", Verbs: "get"},
	}
	cases := []struct {
		name  string
		rules string
		extra string // objects after the ClusterRole
		want  string // a substring of one problem; empty: no problem
	}{
		{name: "as expected", rules: `
- {apiGroups: [""], resources: [pods], verbs: [get, list]}
- {apiGroups: ["*"], resources: ["*/scale"], verbs: [get]}`},
		{name: "a verb more", rules: `
- {apiGroups: [""], resources: [pods], verbs: [get, list, delete]}
- {apiGroups: ["*"], resources: ["*/scale"], verbs: [get]}`, want: "broader than the table: ClusterRole grants delete on pods"},
		{name: "a wildcard verb", rules: `
- {apiGroups: [""], resources: [pods], verbs: ["*"]}
- {apiGroups: ["*"], resources: ["*/scale"], verbs: [get]}`, want: "grants every verb on pods"},
		{name: "update on every scale", rules: `
- {apiGroups: [""], resources: [pods], verbs: [get, list]}
- {apiGroups: ["*"], resources: ["*/scale"], verbs: [get, update]}`, want: "wildcard"},
		{name: "secrets in a ClusterRole", rules: `
- {apiGroups: [""], resources: [pods], verbs: [get, list]}
- {apiGroups: ["*"], resources: ["*/scale"], verbs: [get]}
- {apiGroups: [""], resources: [secrets], resourceNames: [x], verbs: [get]}`, want: "secrets only in a Role"},
		{name: "every Secret of a namespace", rules: `
- {apiGroups: [""], resources: [pods], verbs: [get, list]}
- {apiGroups: ["*"], resources: ["*/scale"], verbs: [get]}`, extra: `
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: r, namespace: tdb-system}
rules:
- {apiGroups: [""], resources: [secrets], verbs: [list]}`, want: "Role grants list on every Secret of its namespace"},
		{name: "a grant dropped", rules: `
- {apiGroups: [""], resources: [pods], verbs: [get]}
- {apiGroups: ["*"], resources: ["*/scale"], verbs: [get]}`, want: "missing from the roles"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var objs Objects
			if err := Parse([]byte(base+c.rules+c.extra), &objs); err != nil {
				t.Fatal(err)
			}
			problems := objs.Check(expected, "tdb-system")
			found := false
			for _, p := range problems {
				found = found || (c.want != "" && strings.Contains(p, c.want))
			}
			if c.want == "" && len(problems) > 0 {
				t.Errorf("unexpected problems: %v", problems)
			}
			if c.want != "" && !found {
				t.Errorf("no problem mentions %q; got %v", c.want, problems)
			}
		})
	}

	// A binding to a role outside the install.
	var objs Objects
	if err := Parse([]byte(base+"- {apiGroups: [\"\"], resources: [pods], verbs: [get, list]}\n"+`
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: admin}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{kind: ServiceAccount, name: operator, namespace: tdb-system}]
`), &objs); err != nil {
		t.Fatal(err)
	}
	if problems := strings.Join(objs.Check(expected[:1], "tdb-system"), "\n"); !strings.Contains(problems, "cluster-admin, not a role of the install") {
		t.Errorf("a binding to cluster-admin went unnoticed: %s", problems)
	}
}
