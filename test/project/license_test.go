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
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every Go file of the project carries the license header of
// hack/boilerplate.go.txt (after its build constraints), as the generated
// files do, and the license itself is at the top of the tree.
func TestEveryGoFileCarriesTheLicenseHeader(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "hack", "boilerplate.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	header := strings.TrimSpace(string(raw))
	if license, err := os.ReadFile(filepath.Join(root, "LICENSE")); err != nil || !strings.Contains(string(license), "Apache License") {
		t.Errorf("LICENSE: %v; want the Apache License, which the header names", err)
	}
	var missing []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "bin", ".git", "testdata", "vendor":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		body := string(src)
		for strings.HasPrefix(body, "//go:build") {
			_, body, _ = strings.Cut(body, "\n")
			body = strings.TrimLeft(body, "\n")
		}
		if !strings.HasPrefix(body, header) {
			rel, _ := filepath.Rel(root, path)
			missing = append(missing, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("%d Go files lack the license header of hack/boilerplate.go.txt:\n%s", len(missing), strings.Join(missing, "\n"))
	}
}
