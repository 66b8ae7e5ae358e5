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
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// docRows reads the grants table of docs/install.md's RBAC section: role
// (ClusterRole, or Role with its namespace in parentheses), apiGroup,
// resources (comma-separated), resourceNames ("(all)": every object),
// verbs (comma-separated), why.
func docRows(t *testing.T, path string) []Row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var rows []Row
	inSection := false
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, "## ") {
			inSection = line == "## RBAC"
			continue
		}
		if !inSection || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| role ") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 6 {
			t.Fatalf("%s: a row of the RBAC table without its 6 cells: %s", path, line)
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(strings.ReplaceAll(cells[i], "`", ""))
		}
		kind := cells[0]
		if ns, ok := strings.CutPrefix(kind, "Role ("); ok {
			if ns != Namespace+")" {
				t.Errorf("%s: a Role in %q, not the operator's namespace %s: %s", path, strings.TrimSuffix(ns, ")"), Namespace, line)
			}
			kind = "Role"
		}
		group := cells[1]
		if group == `""` {
			group = ""
		}
		names := cells[3]
		if names == "(all)" {
			names = ""
		}
		verbs := strings.Split(cells[4], ", ")
		sort.Strings(verbs)
		for _, res := range strings.Split(cells[2], ", ") {
			rows = append(rows, Row{Kind: kind, Group: group, Resource: res, Names: names, Verbs: strings.Join(verbs, ",")})
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no RBAC table under ## RBAC", path)
	}
	return rows
}

// The table users read in docs/install.md is the table the roles are
// checked against (here and in test/install), grant for grant: a right
// the operator gains or loses shows in the doc, or this fails.
func TestInstallDocListsEveryGrant(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "install.md")
	doc := map[grant]bool{}
	for _, g := range expandRows(docRows(t, path)) {
		doc[g] = true
	}
	want := map[grant]bool{}
	for _, g := range expandRows(Expected) {
		want[g] = true
	}
	var problems []string
	for g := range want {
		if !doc[g] {
			problems = append(problems, fmt.Sprintf("not in the doc: %s %s on %s", g.kind, g.verb, describe(g)))
		}
	}
	for g := range doc {
		if !want[g] {
			problems = append(problems, fmt.Sprintf("in the doc, not in Expected: %s %s on %s", g.kind, g.verb, describe(g)))
		}
	}
	sort.Strings(problems)
	if len(problems) > 0 {
		t.Errorf("the RBAC table of %s differs from Expected:\n  %s", path, strings.Join(problems, "\n  "))
	}
}
