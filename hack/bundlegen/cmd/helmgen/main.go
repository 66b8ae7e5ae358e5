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

// Command helmgen writes tdb-operator's Helm chart (dist/chart) from the
// kustomize renderings of config/default, config/certmanager and, when it
// exists, config/prometheus. `make chart` builds it into bin/ and runs it at
// the repository root, which its default paths are relative to:
//
//	kustomize build config/default >default.yaml
//	kustomize build config/certmanager >certmanager.yaml
//	bin/helmgen -version 0.1.0 -default default.yaml -certmanager certmanager.yaml [-prometheus prometheus.yaml]
//
// The output depends only on the input, so `make verify` can regenerate the
// chart into a temporary directory and compare.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tdb-operator/tdb-operator/hack/bundlegen/bundle"
	"github.com/tdb-operator/tdb-operator/hack/bundlegen/chart"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "helmgen:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		in                    chart.Input
		def, cm, prom, crdDir string
		out                   string
	)
	flag.StringVar(&in.Version, "version", "", "Chart version x.y.z (required); the appVersion and the image's default tag are vx.y.z.")
	flag.StringVar(&in.ImageRepository, "image-repository", "", "The manager image's default repository (required).")
	flag.StringVar(&def, "default", "", "File with `kustomize build config/default` (required).")
	flag.StringVar(&cm, "certmanager", "", "File with `kustomize build config/certmanager` (required).")
	flag.StringVar(&prom, "prometheus", "", "File with `kustomize build config/prometheus`; empty: no monitoring objects.")
	flag.StringVar(&crdDir, "crd-dir", "config/crd/bases", "Directory of the CRD files copied into crds/.")
	flag.StringVar(&out, "out", "dist/chart", "The chart's directory; its generated files are replaced.")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	var err error
	for _, f := range []struct {
		name string
		into *[]byte
	}{{def, &in.Default}, {cm, &in.CertManager}, {prom, &in.Prometheus}} {
		if f.name == "" {
			continue
		}
		if *f.into, err = os.ReadFile(f.name); err != nil {
			return err
		}
	}
	if len(in.Default) == 0 || len(in.CertManager) == 0 {
		return fmt.Errorf("-default and -certmanager must name non-empty renderings")
	}
	if in.CRDs, err = readCRDs(crdDir); err != nil {
		return err
	}
	files, err := chart.Generate(in)
	if err != nil {
		return err
	}
	return write(out, files)
}

func readCRDs(dir string) ([]bundle.SourceFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []bundle.SourceFile
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") || e.Name() == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		files = append(files, bundle.SourceFile{Name: e.Name(), Data: data})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, nil
}

// write replaces the chart's generated files: templates/ and crds/ are
// emptied first, so a file that is no longer generated does not linger.
func write(root string, files []chart.File) error {
	for _, dir := range []string{"templates", "crds"} {
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
