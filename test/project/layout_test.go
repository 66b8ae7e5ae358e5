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

package project

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The top level is the one the design card names: kubebuilder's go/v4
// layout (PROJECT) with the reconcilers in controllers/ rather than
// internal/controller, and the webhook in internal/; dist/chart is the Helm
// chart, where kubebuilder's helm plugin puts it (generated from config/).
func TestTopLevelIsTheDesignCards(t *testing.T) {
	want := []string{"api", "bundle", "cmd", "config", "controllers", "dist", "docs", "hack", "internal", "test"}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && e.Name() != "bin" {
			got = append(got, e.Name())
		}
	}
	if !slices.Equal(want, got) {
		t.Errorf("top-level folders %v, want %v (bin/ is ignored build output)", got, want)
	}
	for _, scaffold := range []string{"internal/controller", "internal/webhook"} {
		if _, err := os.Stat(filepath.Join(root, scaffold)); err == nil {
			t.Errorf("%s exists: the reconcilers live in controllers/, the webhook in internal/evictionwebhook", scaffold)
		}
	}
}

// controllers/ holds one reconciler per file, and each file wires its own
// reconciler: Reconcile and SetupWithManager are declared next to the type.
func TestOneReconcilerPerFile(t *testing.T) {
	dir := filepath.Join(root, "controllers")
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	typeFile := map[string]string{}               // reconciler type -> file
	methodFiles := map[string]map[string]string{} // type -> method -> file
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && strings.HasSuffix(ts.Name.Name, "Reconciler") {
						typeFile[ts.Name.Name] = name
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) != 1 {
					continue
				}
				recv := d.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if id, ok := recv.(*ast.Ident); ok && (d.Name.Name == "Reconcile" || d.Name.Name == "SetupWithManager") {
					if methodFiles[id.Name] == nil {
						methodFiles[id.Name] = map[string]string{}
					}
					methodFiles[id.Name][d.Name.Name] = name
				}
			}
		}
	}
	if len(typeFile) < 3 {
		t.Fatalf("found reconcilers %v; want the status, rollout and deletion-cost ones at least", typeFile)
	}
	perFile := map[string][]string{}
	for typ, file := range typeFile {
		perFile[file] = append(perFile[file], typ)
		for _, m := range []string{"Reconcile", "SetupWithManager"} {
			if got := methodFiles[typ][m]; got != file {
				t.Errorf("%s.%s is in %q, want %s, beside the type", typ, m, got, file)
			}
		}
		if !strings.HasSuffix(file, "_controller.go") {
			t.Errorf("%s is in %s, want a *_controller.go file", typ, file)
		}
	}
	for file, types := range perFile {
		if len(types) > 1 {
			t.Errorf("%s declares %d reconcilers %v, want one", file, len(types), types)
		}
	}
}

// docs/development.md lists the make targets exactly as the Makefile
// describes them: every target with a help text, in order, with that text.
func TestDevelopmentDocListsTheMakeTargets(t *testing.T) {
	target := regexp.MustCompile(`(?m)^([a-zA-Z0-9_-]+):.*?## (.*)$`)
	var want []string
	for _, m := range target.FindAllStringSubmatch(string(read(t, "Makefile")), -1) {
		want = append(want, fmt.Sprintf("| `make %s` | %s |", m[1], strings.ReplaceAll(m[2], "|", `\|`)))
	}
	row := regexp.MustCompile("(?m)^\\| `make [^`]+` \\|.*\\|$")
	got := row.FindAllString(string(read(t, filepath.Join("docs", "development.md"))), -1)
	if len(want) < 10 {
		t.Fatalf("found %d targets with help in the Makefile", len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("docs/development.md's make targets differ from the Makefile's (-Makefile +doc):\n%s", diff)
	}
}

// hack/ and test/ depend on each other one way only: test/ may run hack/'s
// scripts (the local cluster, the binary builds) and import its Go packages
// (make run-local's webhook registration), while nothing under hack/
// imports a package under test/ or names a path under test/ in what it
// runs. The demo and the benches are programs and suites under test/ over
// the local-cluster harness (test/kwokenv), not hack/ commands.
func TestHackNeverReachesIntoTest(t *testing.T) {
	module := parseGoMod(t, "go.mod").module
	if module == "" {
		t.Fatal("go.mod names no module")
	}
	// A path under test/ as a command or a file names it: "./test/demo",
	// "$ROOT/test/x", "test/kwokenv"; not "smoke-test/" or "testdata/".
	testPath := regexp.MustCompile(`(^|[^A-Za-z0-9_.-])(\.\.?/)*test/`)
	var edges []string
	err := filepath.WalkDir(filepath.Join(root, "hack"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case strings.HasSuffix(path, ".go"):
			edges = append(edges, goEdgesIntoTest(t, path, rel, module, testPath)...)
		case strings.HasSuffix(path, ".sh"):
			for i, line := range strings.Split(string(read(t, rel)), "\n") {
				if code := strings.TrimSpace(line); !strings.HasPrefix(code, "#") && testPath.MatchString(code) {
					edges = append(edges, fmt.Sprintf("%s:%d runs %q", rel, i+1, code))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(edges) > 0 {
		t.Errorf("hack/ reaches into test/ (test/ may use hack/, not the other way; docs/development.md, Layout):\n%s", strings.Join(edges, "\n"))
	}
}

// goEdgesIntoTest lists a Go file's imports of packages under the module's
// test/ and its string literals that name a path under test/ (a command it
// runs, a file it reads), with filepath.Join(..., "test", ...) among them.
func goEdgesIntoTest(t *testing.T, path, rel, module string, testPath *regexp.Regexp) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var edges []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p == module+"/test" || strings.HasPrefix(p, module+"/test/") {
			edges = append(edges, fmt.Sprintf("%s imports %s", rel, p))
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ImportSpec:
			return false
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Join" {
				for _, arg := range n.Args {
					if lit, ok := arg.(*ast.BasicLit); ok && lit.Value == `"test"` {
						edges = append(edges, fmt.Sprintf("%s:%d joins a path under test/", rel, fset.Position(lit.Pos()).Line))
					}
				}
			}
		case *ast.BasicLit:
			if s, err := strconv.Unquote(n.Value); n.Kind == token.STRING && err == nil && testPath.MatchString(s) {
				edges = append(edges, fmt.Sprintf("%s:%d names %q", rel, fset.Position(n.Pos()).Line, s))
			}
		}
		return true
	})
	return edges
}
