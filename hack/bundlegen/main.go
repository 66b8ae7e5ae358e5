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

// Command bundlegen writes tdb-operator's OLM bundle (bundle/ and
// bundle.Dockerfile) from the kustomize rendering of config/default. It is
// a Go module of its own; `make bundle` builds it into bin/ and runs it at
// the repository root, which its default paths are relative to:
//
//	go -C hack/bundlegen build -o "$PWD/bin/bundlegen" .
//	kustomize build config/default | bin/bundlegen -version 0.1.0 -image IMG -scorecard-image SCORECARD_IMG
//
// The output depends only on the input, so `make verify` can regenerate the
// bundle into a temporary directory and compare.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/tdb-operator/tdb-operator/hack/bundlegen/bundle"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bundlegen:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		in       bundle.Input
		rendered string
		crdDir   string
		samples  string
		out      string
	)
	flag.StringVar(&in.Version, "version", "", "Operator version x.y.z (required).")
	flag.StringVar(&in.Image, "image", "", "Manager image the CSV deploys (required).")
	flag.StringVar(&in.Replaces, "replaces", "", "Name of the CSV this version replaces, if any.")
	flag.StringVar(&in.ScorecardImage, "scorecard-image", "", "Image of the scorecard's built-in tests (required).")
	flag.StringVar(&rendered, "rendered", "-", "`kustomize build config/default` output; - reads stdin.")
	flag.StringVar(&crdDir, "crd-dir", "config/crd/bases", "Directory of the CRD files copied into the bundle.")
	flag.StringVar(&samples, "samples-dir", "config/samples", "Directory of the samples that become alm-examples.")
	flag.StringVar(&out, "out", ".", "Output root: bundle/ and bundle.Dockerfile are written under it.")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}

	var err error
	if rendered == "-" {
		in.Rendered, err = io.ReadAll(os.Stdin)
	} else {
		in.Rendered, err = os.ReadFile(rendered)
	}
	if err != nil {
		return fmt.Errorf("reading the rendered config: %w", err)
	}
	if len(in.Rendered) == 0 {
		return errors.New("the rendered config is empty (pipe `kustomize build config/default` in)")
	}
	if in.CRDs, err = readYAMLFiles(crdDir, nil); err != nil {
		return err
	}
	order, err := kustomizationResources(samples)
	if err != nil {
		return err
	}
	if in.Samples, err = readYAMLFiles(samples, order); err != nil {
		return err
	}

	files, err := bundle.Generate(in)
	if err != nil {
		return err
	}
	return write(out, files)
}

// readYAMLFiles reads a directory's YAML files (not kustomization.yaml), in
// the given order if one is given, else by name.
func readYAMLFiles(dir string, order []string) ([]bundle.SourceFile, error) {
	if order == nil {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || name == "kustomization.yaml" || (!strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".yml")) {
				continue
			}
			order = append(order, name)
		}
		sort.Strings(order)
	}
	var files []bundle.SourceFile
	for _, name := range order {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		files = append(files, bundle.SourceFile{Name: name, Data: data})
	}
	return files, nil
}

// kustomizationResources lists a kustomization's resources, so the
// examples come in the order config/samples declares; nil without one.
func kustomizationResources(dir string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("%s/kustomization.yaml: %w", dir, err)
	}
	return k.Resources, nil
}

// write replaces the generated parts of the output root: the bundle's
// directories are emptied first, so a file that is no longer generated
// does not linger.
func write(root string, files []bundle.File) error {
	for _, dir := range []string{bundle.ManifestsDir, bundle.MetadataDir, bundle.ScorecardDir} {
		if err := os.RemoveAll(filepath.Join(root, dir)); err != nil {
			return err
		}
	}
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
