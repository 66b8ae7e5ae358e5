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

// Package krew checks the krew plugin manifest of kubectl-tdb without krew:
// the template hack/krew/tdb.yaml.tmpl, rendered as hack/plugin-release.sh
// renders it, and every release the script wrote under bin/plugin-release/
// (manifest, archives, sha256sums.txt), against the rules krew applies to a
// plugin manifest when it validates, downloads and installs it.
//
// The rules are krew's (sigs.k8s.io/krew), restated here, each marked with
// where krew states it:
//
//	[validate]  internal/index/validation/validate.go (ValidatePlugin), run by
//	            krew on every manifest it reads
//	[vkm]       cmd/validate-krew-manifest/main.go, krew-index's CI check
//	[install]   internal/installation/install.go and move.go
//	[download]  internal/download/downloader.go
//	[search]    cmd/krew/cmd/search.go
//	[docs]      https://krew.sigs.k8s.io/docs/developer-guide/plugin-manifest/
//	            and .../develop/naming-guide/
//
// Rules marked [ours] are stricter than krew, for this project's manifest.
package krew

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"
)

const (
	krewAPIVersion = "krew.googlecontainertools.github.com/v1alpha2"
	krewKind       = "Plugin"
	// searchWidth is where `kubectl krew search` cuts shortDescription.
	searchWidth = 50
)

// plugin is a krew plugin manifest (krew's pkg/index types, restated).
type plugin struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              pluginSpec `json:"spec"`
}

type pluginSpec struct {
	Version          string     `json:"version,omitempty"`
	ShortDescription string     `json:"shortDescription,omitempty"`
	Description      string     `json:"description,omitempty"`
	Caveats          string     `json:"caveats,omitempty"`
	Homepage         string     `json:"homepage,omitempty"`
	Platforms        []platform `json:"platforms,omitempty"`
}

type platform struct {
	URI      string                `json:"uri,omitempty"`
	Sha256   string                `json:"sha256,omitempty"`
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	Files    []fileOperation       `json:"files"`
	Bin      string                `json:"bin"`
}

type fileOperation struct {
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

type osArch struct{ os, arch string }

func (p osArch) String() string { return p.os + "/" + p.arch }

// supportedPlatforms are the <os,arch> pairs krew runs on; every platform
// entry must select at least one, and no pair may be selected twice [vkm].
var supportedPlatforms = []osArch{
	{"windows", "386"}, {"windows", "amd64"}, {"windows", "arm64"},
	{"linux", "386"}, {"linux", "amd64"}, {"linux", "arm"}, {"linux", "arm64"}, {"linux", "ppc64le"},
	{"darwin", "386"}, {"darwin", "amd64"}, {"darwin", "arm64"},
}

var (
	safeName       = regexp.MustCompile(`^[\w-]+$`)                 // [validate]
	kebabName      = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) // [docs] naming guide
	validSHA256    = regexp.MustCompile(`^[a-f0-9]{64}$`)           // [validate]: lower case only
	windowsDevices = map[string]bool{                               // [validate]: reserved file names
		"CON": true, "PRN": true, "AUX": true, "NUL": true,
		"COM1": true, "COM2": true, "COM3": true, "COM4": true, "COM5": true, "COM6": true, "COM7": true, "COM8": true, "COM9": true,
		"LPT1": true, "LPT2": true, "LPT3": true, "LPT4": true, "LPT5": true, "LPT6": true, "LPT7": true, "LPT8": true, "LPT9": true,
	}
	// licenseNames are the file names krew-index accepts as the plugin's
	// license among the installed files [vkm].
	licenseNames = map[string]bool{
		"license": true, "license.txt": true, "license.md": true,
		"licenses": true, "licenses.txt": true, "licenses.md": true,
		"copying": true, "copying.txt": true,
	}
)

// parseManifest decodes a manifest. Unknown fields are errors [ours]: krew
// ignores them, so a misspelt field would silently be lost.
func parseManifest(data []byte) (plugin, error) {
	var p plugin
	err := yaml.UnmarshalStrict(data, &p)
	return p, err
}

// validateManifest returns every way p, read from the file <name>.yaml, breaks
// krew's rules. It does not look at archives (see checkArchive); `bin` is
// checked against the files the `files` operations install from an archive
// holding exactly the files their `from` fields name.
func validateManifest(name string, p plugin) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	if p.APIVersion != krewAPIVersion {
		fail("apiVersion is %q, not %q", p.APIVersion, krewAPIVersion) // [validate]
	}
	if p.Kind != krewKind {
		fail("kind is %q, not %q", p.Kind, krewKind) // [validate]
	}
	switch {
	case !safeName.MatchString(p.Name) || windowsDevices[strings.ToUpper(p.Name)]:
		fail("metadata.name %q is not allowed: it must match %s and not be a Windows device name", p.Name, safeName) // [validate]
	case !kebabName.MatchString(p.Name):
		fail("metadata.name %q is not lower-case kebab-case", p.Name) // [docs]
	}
	if p.Name != name {
		fail("metadata.name is %q, but the manifest file is %s.yaml: they must match", p.Name, name) // [validate], [vkm]
	}

	s := p.Spec
	switch {
	case s.ShortDescription == "":
		fail("spec.shortDescription is empty") // [validate]
	case strings.ContainsAny(s.ShortDescription, "\r\n"):
		fail("spec.shortDescription has a line break") // [validate]
	case len([]rune(s.ShortDescription)) > searchWidth:
		fail("spec.shortDescription has %d characters: `kubectl krew search` cuts it at %d", len([]rune(s.ShortDescription)), searchWidth) // [search]
	}
	if strings.TrimSpace(s.Description) == "" {
		fail("spec.description is empty") // [docs]: required
	}
	if s.Homepage != "" && !strings.HasPrefix(s.Homepage, "https://") {
		fail("spec.homepage %q is not an https URL", s.Homepage) // [ours]
	}
	switch {
	case s.Version == "":
		fail("spec.version is empty") // [validate]
	case !strings.HasPrefix(s.Version, "v"):
		fail("spec.version %q does not start with v", s.Version) // [validate]
	case strings.TrimSpace(s.Version) != s.Version:
		fail("spec.version %q has spaces", s.Version)
	default:
		if _, err := version.ParseSemantic(s.Version); err != nil {
			fail("spec.version %q is not a semantic version: %v", s.Version, err) // [validate]
		}
	}

	if len(s.Platforms) == 0 {
		fail("spec.platforms is empty") // [validate]
	}
	selectedBy := map[osArch][]int{}
	for i, pl := range s.Platforms {
		for _, msg := range validatePlatform(pl) {
			fail("spec.platforms[%d]: %s", i, msg)
		}
		matched := selected(pl.Selector)
		if pl.Selector != nil && len(matched) == 0 {
			fail("spec.platforms[%d]: the selector selects no platform krew supports", i) // [vkm]
		}
		for _, env := range matched {
			selectedBy[env] = append(selectedBy[env], i)
			if env.os == "windows" && !strings.HasSuffix(pl.Bin, ".exe") {
				fail("spec.platforms[%d]: selects %s but bin %q is not an .exe", i, env, pl.Bin) // [docs]
			}
		}
	}
	for _, env := range supportedPlatforms {
		if idx := selectedBy[env]; len(idx) > 1 {
			fail("spec.platforms %v all select %s", idx, env) // [vkm]
		}
	}
	return problems
}

// validatePlatform returns the problems of one platform entry.
func validatePlatform(pl platform) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	switch {
	case pl.URI == "":
		fail("uri is empty") // [validate]
	case !strings.HasPrefix(pl.URI, "https://"):
		fail("uri %q is not https", pl.URI) // [ours]
	case !strings.HasSuffix(pl.URI, ".tar.gz") && !strings.HasSuffix(pl.URI, ".zip"):
		fail("uri %q is not a .tar.gz or .zip archive", pl.URI) // [docs]
	}
	switch {
	case pl.Sha256 == "":
		fail("sha256 is empty") // [validate]
	case !validSHA256.MatchString(pl.Sha256):
		fail("sha256 %q does not match %s", pl.Sha256, validSHA256) // [validate]
	}

	problems = append(problems, validateSelector(pl.Selector)...)

	if pl.Files != nil && len(pl.Files) == 0 {
		fail("files is an empty list: leave it out or list operations") // [validate]
	}
	for j, op := range pl.Files {
		switch {
		case op.From == "":
			fail("files[%d].from is empty", j) // [validate]
		case !isRelativeInside(op.From):
			fail("files[%d].from %q leaves the archive", j, op.From) // [install], [download]
		}
		switch {
		case op.To == "":
			fail("files[%d].to is empty", j) // [validate]
		case path.Clean(op.To) != op.To:
			fail("files[%d].to %q is not clean (%q)", j, op.To, path.Clean(op.To)) // [install] move.go
		case !isRelativeInside(op.To):
			fail("files[%d].to %q leaves the installation directory", j, op.To) // [install] move.go
		}
	}

	switch {
	case pl.Bin == "":
		fail("bin is empty") // [validate]
	case !isRelativeInside(pl.Bin):
		fail("bin %q is outside the installation directory", pl.Bin) // [install]
	default:
		// Only when the `from` fields name files (no patterns) is the
		// archive's content known without the archive.
		var entries []string
		literal := pl.Files != nil
		for _, op := range pl.Files {
			literal = literal && !strings.ContainsAny(op.From, `*?[\`)
			entries = append(entries, op.From)
		}
		if literal {
			installed, moveProblems := installedFiles(entries, pl.Files)
			if _, ok := installed[path.Clean(pl.Bin)]; len(moveProblems) == 0 && !ok {
				fail("bin %q is not among the files installed: %v", pl.Bin, slices.Sorted(maps.Keys(installed))) // [install]
			}
		}
	}
	return problems
}

// validateSelector: a selector is required, not empty, and only on the keys
// os and arch [validate]; it must also be a valid label selector.
func validateSelector(sel *metav1.LabelSelector) []string {
	if sel == nil {
		return []string{"selector is missing"}
	}
	var problems []string
	if sel.MatchLabels == nil && len(sel.MatchExpressions) == 0 {
		problems = append(problems, "selector is empty")
	}
	if sel.MatchLabels != nil && len(sel.MatchLabels) == 0 {
		problems = append(problems, "selector.matchLabels is given but empty")
	}
	if sel.MatchExpressions != nil && len(sel.MatchExpressions) == 0 {
		problems = append(problems, "selector.matchExpressions is given but empty")
	}
	var keys []string
	for k := range sel.MatchLabels {
		keys = append(keys, k)
	}
	for _, e := range sel.MatchExpressions {
		keys = append(keys, e.Key)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k != "os" && k != "arch" {
			problems = append(problems, fmt.Sprintf("selector key %q is not supported (only os and arch)", k))
		}
	}
	if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
		problems = append(problems, fmt.Sprintf("selector is invalid: %v", err))
	}
	return problems
}

// selected returns the supported platforms a selector selects.
func selected(sel *metav1.LabelSelector) []osArch {
	if sel == nil {
		return nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil
	}
	var out []osArch
	for _, env := range supportedPlatforms {
		if s.Matches(labels.Set{"os": env.os, "arch": env.arch}) {
			out = append(out, env)
		}
	}
	return out
}

// isRelativeInside says whether p is a relative slash path that stays inside
// its base directory ("." counts).
func isRelativeInside(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || strings.Contains(p, `\`) ||
		(len(p) > 1 && p[1] == ':') {
		return false
	}
	c := path.Clean(p)
	return c != ".." && !strings.HasPrefix(c, "../")
}

// installedFiles returns the files krew installs from an archive holding
// the regular files entries (slash paths relative to its root), each mapped
// to the entry it comes from, following ops the way krew's move.go does: an
// unset `files` means {from: "*", to: "."}; a `from` naming a file or
// directory moves it to `to` (to its own name when `to` is "."); otherwise
// `from` is a glob pattern whose every match moves into the directory `to`.
// Each operation must move something [install].
func installedFiles(entries []string, ops []fileOperation) (map[string]string, []string) {
	if ops == nil {
		ops = []fileOperation{{From: "*", To: "."}}
	}
	src := map[string]bool{}
	for _, e := range entries {
		src[path.Clean(e)] = true
	}
	dst := map[string]string{}
	var problems []string

	// under returns the source files at p: p itself, or the files below it.
	under := func(p string) []string {
		var out []string
		for f := range src {
			if f == p || strings.HasPrefix(f, p+"/") {
				out = append(out, f)
			}
		}
		return out
	}
	move := func(from, to string) {
		for _, f := range under(from) {
			dst[path.Join(to, strings.TrimPrefix(f, from))] = f
			delete(src, f)
		}
	}

	for j, op := range ops {
		from := path.Clean(op.From)
		if !isRelativeInside(op.From) || !isRelativeInside(op.To) {
			problems = append(problems, fmt.Sprintf("files[%d] leaves the archive or the installation directory", j))
			continue
		}
		if len(under(from)) > 0 {
			to := path.Clean(op.To)
			if to == "." {
				to = path.Base(from)
			}
			move(from, to)
			continue
		}
		// A glob: it matches files or directories at the pattern's depth.
		matches := map[string]bool{}
		depth := strings.Count(from, "/")
		for f := range src {
			parts := strings.Split(f, "/")
			if len(parts) <= depth {
				continue
			}
			candidate := strings.Join(parts[:depth+1], "/")
			ok, err := path.Match(from, candidate)
			if err != nil {
				problems = append(problems, fmt.Sprintf("files[%d].from %q is a bad pattern: %v", j, op.From, err))
				break
			}
			if ok {
				matches[candidate] = true
			}
		}
		if len(matches) == 0 {
			problems = append(problems, fmt.Sprintf("files[%d].from %q matches nothing in the archive", j, op.From))
			continue
		}
		for _, m := range slices.Sorted(maps.Keys(matches)) {
			move(m, path.Join(path.Clean(op.To), path.Base(m)))
		}
	}
	return dst, problems
}

// hasLicense says whether a license file is among the installed files [vkm].
func hasLicense(installed map[string]string) bool {
	for f := range installed {
		if licenseNames[strings.ToLower(path.Base(f))] {
			return true
		}
	}
	return false
}
