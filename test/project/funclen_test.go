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
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const (
	// maxFuncLines bounds every product function, from func to its closing
	// brace.
	maxFuncLines = 100
	// justifiedFuncLines is the length above which a function's doc comment
	// must say why it is not split, with longFuncMarker.
	justifiedFuncLines = 80
	// longFuncMarker, in a doc comment, justifies a function of
	// justifiedFuncLines to maxFuncLines lines: "Long because ...".
	longFuncMarker = "Long because"
)

// funcLenAllowlist names the functions still over the limits while they are
// being split, as "path:Func" or "path:Recv.Method", with the reason. It
// must be empty: an entry is removed when its function is split, and an
// entry whose function no longer exceeds the limits (or no longer exists)
// fails the test, so the list cannot outlive its reason.
var funcLenAllowlist = map[string]string{}

// productDirs are the folders of product code; internal/testing is test
// support.
var productDirs = []string{"api", "cmd", "controllers", "internal"}

// A product function reads as one algorithm of named steps: none is over
// maxFuncLines lines, and one over justifiedFuncLines says in its doc
// comment why it is not split (longFuncMarker). Test and generated files are
// not product code.
func TestProductFunctionsAreShort(t *testing.T) {
	seen, tooLong := map[string]bool{}, map[string]string{}
	funcs := 0
	for _, dir := range productDirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if rel == "internal/testing" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
				return nil
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			if ast.IsGenerated(f) {
				return nil
			}
			for _, decl := range f.Decls {
				fd, ok := decl.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				funcs++
				name := rel + ":" + funcName(fd)
				lines := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
				if problem := lengthProblem(fd, lines); problem != "" {
					if _, ok := funcLenAllowlist[name]; ok {
						seen[name] = true
						continue
					}
					tooLong[name] = problem
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if funcs < 500 {
		t.Fatalf("found %d functions under %v; the walk missed the product code", funcs, productDirs)
	}
	for _, name := range sortedNames(tooLong) {
		t.Errorf("%s %s: split it into named steps, or say why it reads best whole in its doc comment (%q)", name, tooLong[name], longFuncMarker)
	}
	for _, name := range sortedNames(funcLenAllowlist) {
		if !seen[name] {
			t.Errorf("%s is allowlisted (%s) but no longer exceeds the limits (or no longer exists): remove it from funcLenAllowlist", name, funcLenAllowlist[name])
		}
	}
}

// lengthProblem says why a function of the given length breaks the rule,
// or "" when it keeps it.
func lengthProblem(fd *ast.FuncDecl, lines int) string {
	switch {
	case lines > maxFuncLines:
		return fmt.Sprintf("is %d lines, over %d", lines, maxFuncLines)
	case lines > justifiedFuncLines && (fd.Doc == nil || !strings.Contains(fd.Doc.Text(), longFuncMarker)):
		return fmt.Sprintf("is %d lines, over %d without a justification", lines, justifiedFuncLines)
	}
	return ""
}

// funcName is Func, or Recv.Method for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	recv := fd.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	switch r := recv.(type) {
	case *ast.IndexExpr: // a generic receiver, T[P]
		recv = r.X
	case *ast.IndexListExpr:
		recv = r.X
	}
	if id, ok := recv.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
