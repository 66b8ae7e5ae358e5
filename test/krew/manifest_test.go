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

package krew

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	templatePath = "hack/krew/tdb.yaml.tmpl"
	releaseDir   = "bin/plugin-release"
	homepage     = "https://github.com/tdb-operator/tdb-operator"
	releasesURL  = homepage + "/releases/download"
)

// wantPlatforms are the platforms the plugin is released for.
var wantPlatforms = []string{"darwin_amd64", "darwin_arm64", "linux_amd64", "linux_arm64", "windows_amd64"}

var (
	shaPlaceholder  = regexp.MustCompile(`@SHA256_([a-z0-9]+_[a-z0-9]+)@`)
	anyPlaceholder  = regexp.MustCompile(`@[A-Za-z0-9_]+@`)
	testVersion     = "v1.2.3"
	testVersionNote = "rendered with version " + testVersion + " and a made-up sha256 per platform"
)

// repoFile reads a file of the repository (the tests run in test/krew).
func repoFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sha256Hex is data's sha256, in hex.
func sha256Hex(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// fakeSum is the made-up sha256 of a platform's archive.
func fakeSum(platform string) string { return sha256Hex([]byte(platform)) }

// render does what hack/plugin-release.sh does with the template.
func render(tmpl, version string, sums map[string]string) string {
	out := strings.ReplaceAll(tmpl, "@VERSION@", version)
	return shaPlaceholder.ReplaceAllStringFunc(out, func(m string) string {
		if s, ok := sums[shaPlaceholder.FindStringSubmatch(m)[1]]; ok {
			return s
		}
		return m
	})
}

// renderedTemplate is the template rendered with fake sums, and its platforms.
func renderedTemplate(t *testing.T) (string, []string) {
	t.Helper()
	tmpl := string(repoFile(t, templatePath))
	sums := map[string]string{}
	for _, m := range shaPlaceholder.FindAllStringSubmatch(tmpl, -1) {
		sums[m[1]] = fakeSum(m[1])
	}
	return render(tmpl, testVersion, sums), slices.Sorted(maps.Keys(sums))
}

func mustParse(t *testing.T, manifest string) plugin {
	t.Helper()
	p, err := parseManifest([]byte(manifest))
	if err != nil {
		t.Fatalf("parsing the manifest: %v", err)
	}
	return p
}

func archiveName(version, platform string) string {
	return "kubectl-tdb_" + version + "_" + platform + ".tar.gz"
}

// TestTemplate renders the template as the release script does and checks
// it passes krew's rules, and that each platform entry downloads that
// platform's archive, under that release, and runs its kubectl-tdb.
func TestTemplate(t *testing.T) {
	manifest, platforms := renderedTemplate(t)
	if !slices.Equal(platforms, wantPlatforms) {
		t.Errorf("the template's @SHA256_<os>_<arch>@ placeholders name %v, want %v", platforms, wantPlatforms)
	}
	if left := anyPlaceholder.FindAllString(manifest, -1); len(left) > 0 {
		t.Errorf("placeholders left after rendering: %v", left)
	}
	p := mustParse(t, manifest)
	for _, problem := range validateManifest("tdb", p) {
		t.Errorf("%s: %s", testVersionNote, problem)
	}
	if p.Spec.Version != testVersion {
		t.Errorf("spec.version is %q, want the release's version %q", p.Spec.Version, testVersion)
	}
	if p.Spec.Homepage != homepage {
		t.Errorf("spec.homepage is %q, want %q", p.Spec.Homepage, homepage)
	}
	if strings.TrimSpace(p.Spec.Caveats) == "" {
		t.Error("spec.caveats is empty")
	}

	var seen []string
	for i, pl := range p.Spec.Platforms {
		if pl.Selector == nil || len(pl.Selector.MatchLabels) != 2 || len(pl.Selector.MatchExpressions) != 0 {
			t.Errorf("platforms[%d]: the selector must be matchLabels os and arch only: %+v", i, pl.Selector)
			continue
		}
		goos, goarch := pl.Selector.MatchLabels["os"], pl.Selector.MatchLabels["arch"]
		platform := goos + "_" + goarch
		seen = append(seen, platform)
		if want := releasesURL + "/" + testVersion + "/" + archiveName(testVersion, platform); pl.URI != want {
			t.Errorf("platforms[%d] (%s): uri %q, want %q", i, platform, pl.URI, want)
		}
		if pl.Sha256 != fakeSum(platform) {
			t.Errorf("platforms[%d] (%s): sha256 is not the @SHA256_%s@ placeholder's", i, platform, platform)
		}
		bin := "kubectl-tdb"
		if goos == "windows" {
			bin += ".exe"
		}
		if pl.Bin != bin {
			t.Errorf("platforms[%d] (%s): bin %q, want %q", i, platform, pl.Bin, bin)
		}
		// What the release script puts in each archive.
		installed, problems := installedFiles([]string{bin, "LICENSE"}, pl.Files)
		for _, problem := range problems {
			t.Errorf("platforms[%d] (%s): %s", i, platform, problem)
		}
		if _, ok := installed[bin]; !ok {
			t.Errorf("platforms[%d] (%s): %s is not installed from the release archive: %v", i, platform, bin, installed)
		}
		if !hasLicense(installed) {
			t.Errorf("platforms[%d] (%s): LICENSE is not installed from the release archive", i, platform)
		}
	}
	if slices.Sort(seen); !slices.Equal(seen, platforms) {
		t.Errorf("the platform entries select %v, the sha256 placeholders name %v", seen, platforms)
	}
}

// TestRejectsBrokenManifests checks the rules can fail: each case breaks the
// rendered template one way.
func TestRejectsBrokenManifests(t *testing.T) {
	manifest, _ := renderedTemplate(t)
	linux := func(p *plugin) *platform { return &p.Spec.Platforms[0] } // linux/amd64
	windows := func(p *plugin) *platform { return &p.Spec.Platforms[len(p.Spec.Platforms)-1] }

	cases := []struct {
		name    string
		file    string // the manifest's file name without .yaml; "tdb" if empty
		edit    func(p *plugin)
		wantErr string
	}{
		{name: "other apiVersion", edit: func(p *plugin) { p.APIVersion = "krew.googlecontainertools.github.com/v1alpha1" }, wantErr: "apiVersion"},
		{name: "other kind", edit: func(p *plugin) { p.Kind = "Plugins" }, wantErr: "kind"},
		{name: "name unlike the file", file: "kubectl-tdb", wantErr: "must match"},
		{name: "unsafe name", file: "tdb/x", edit: func(p *plugin) { p.Name = "tdb/x" }, wantErr: "not allowed"},
		{name: "windows device name", file: "con", edit: func(p *plugin) { p.Name = "con" }, wantErr: "Windows device"},
		{name: "not kebab-case", file: "Tdb_Plugin", edit: func(p *plugin) { p.Name = "Tdb_Plugin" }, wantErr: "kebab-case"},
		{name: "no short description", edit: func(p *plugin) { p.Spec.ShortDescription = "" }, wantErr: "shortDescription is empty"},
		{name: "short description on two lines", edit: func(p *plugin) { p.Spec.ShortDescription = "Predict drains\nand plan them" }, wantErr: "line break"},
		{name: "long short description", edit: func(p *plugin) { p.Spec.ShortDescription = strings.Repeat("x", 51) }, wantErr: "cuts it at 50"},
		{name: "no description", edit: func(p *plugin) { p.Spec.Description = " \n" }, wantErr: "description is empty"},
		{name: "no version", edit: func(p *plugin) { p.Spec.Version = "" }, wantErr: "version is empty"},
		{name: "version without v", edit: func(p *plugin) { p.Spec.Version = "1.2.3" }, wantErr: "does not start with v"},
		{name: "version not semver", edit: func(p *plugin) { p.Spec.Version = "v1.2" }, wantErr: "not a semantic version"},
		{name: "no platforms", edit: func(p *plugin) { p.Spec.Platforms = nil }, wantErr: "platforms is empty"},
		{name: "no uri", edit: func(p *plugin) { linux(p).URI = "" }, wantErr: "uri is empty"},
		{name: "http uri", edit: func(p *plugin) { linux(p).URI = "http://example.invalid/a.tar.gz" }, wantErr: "not https"},
		{name: "uri not an archive", edit: func(p *plugin) { linux(p).URI = "https://example.invalid/kubectl-tdb" }, wantErr: ".tar.gz or .zip"},
		{name: "no sha256", edit: func(p *plugin) { linux(p).Sha256 = "" }, wantErr: "sha256 is empty"},
		{name: "upper-case sha256", edit: func(p *plugin) { linux(p).Sha256 = strings.ToUpper(linux(p).Sha256) }, wantErr: "does not match"},
		{name: "short sha256", edit: func(p *plugin) { linux(p).Sha256 = linux(p).Sha256[:63] }, wantErr: "does not match"},
		{name: "no bin", edit: func(p *plugin) { linux(p).Bin = "" }, wantErr: "bin is empty"},
		{name: "absolute bin", edit: func(p *plugin) { linux(p).Bin = "/usr/local/bin/kubectl-tdb" }, wantErr: "outside the installation directory"},
		{name: "bin climbing out", edit: func(p *plugin) { linux(p).Bin = "../kubectl-tdb" }, wantErr: "outside the installation directory"},
		{name: "bin not installed", edit: func(p *plugin) { linux(p).Bin = "kubectl-tdb-linux" }, wantErr: "not among the files installed"},
		{name: "windows bin not an exe", edit: func(p *plugin) {
			windows(p).Bin = "kubectl-tdb"
			windows(p).Files[0] = fileOperation{From: "kubectl-tdb", To: "."}
		}, wantErr: "not an .exe"},
		{name: "empty files list", edit: func(p *plugin) { linux(p).Files = []fileOperation{} }, wantErr: "empty list"},
		{name: "file without from", edit: func(p *plugin) { linux(p).Files[1].From = "" }, wantErr: "from is empty"},
		{name: "file without to", edit: func(p *plugin) { linux(p).Files[1].To = "" }, wantErr: "to is empty"},
		{name: "from climbing out", edit: func(p *plugin) { linux(p).Files[1].From = "../LICENSE" }, wantErr: "leaves the archive"},
		{name: "unclean to", edit: func(p *plugin) { linux(p).Files[1].To = "./" }, wantErr: "not clean"},
		{name: "absolute to", edit: func(p *plugin) { linux(p).Files[1].To = "/etc" }, wantErr: "leaves the installation directory"},
		{name: "no selector", edit: func(p *plugin) { linux(p).Selector = nil }, wantErr: "selector is missing"},
		{name: "empty selector", edit: func(p *plugin) { linux(p).Selector = &metav1.LabelSelector{} }, wantErr: "selector is empty"},
		{name: "empty matchLabels", edit: func(p *plugin) { linux(p).Selector.MatchLabels = map[string]string{} }, wantErr: "matchLabels is given but empty"},
		{name: "unsupported selector key", edit: func(p *plugin) { linux(p).Selector.MatchLabels["libc"] = "musl" }, wantErr: `key "libc"`},
		{name: "selects no supported platform", edit: func(p *plugin) { linux(p).Selector.MatchLabels["os"] = "plan9" }, wantErr: "selects no platform"},
		{name: "overlapping selectors", edit: func(p *plugin) { delete(linux(p).Selector.MatchLabels, "arch") }, wantErr: "all select linux/arm64"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := mustParse(t, manifest)
			if tc.edit != nil {
				tc.edit(&p)
			}
			file := tc.file
			if file == "" {
				file = "tdb"
			}
			problems := validateManifest(file, p)
			if !slices.ContainsFunc(problems, func(s string) bool { return strings.Contains(s, tc.wantErr) }) {
				t.Errorf("want a problem containing %q, got %q", tc.wantErr, problems)
			}
		})
	}

	t.Run("misspelt field", func(t *testing.T) {
		broken := strings.Replace(manifest, "    sha256:", "    sha265:", 1)
		if broken == manifest {
			t.Fatal("no sha256 field in the manifest")
		}
		if _, err := parseManifest([]byte(broken)); err == nil || !strings.Contains(err.Error(), "sha265") {
			t.Errorf("want an unknown field error naming sha265, got %v", err)
		}
	})
}

// TestInstalledFiles checks the simulation of krew's file moves.
func TestInstalledFiles(t *testing.T) {
	cases := []struct {
		name    string
		entries []string
		files   []fileOperation
		want    []string
		wantErr string
	}{
		{name: "files unset: everything", entries: []string{"kubectl-tdb", "LICENSE", "docs/a.md"}, want: []string{"LICENSE", "docs/a.md", "kubectl-tdb"}},
		{name: "file to dot keeps its name", entries: []string{"out/kubectl-tdb", "LICENSE"}, files: []fileOperation{{From: "out/kubectl-tdb", To: "."}, {From: "LICENSE", To: "."}}, want: []string{"LICENSE", "kubectl-tdb"}},
		{name: "file to a name is renamed", entries: []string{"kubectl-tdb-linux"}, files: []fileOperation{{From: "kubectl-tdb-linux", To: "kubectl-tdb"}}, want: []string{"kubectl-tdb"}},
		{name: "glob into a directory", entries: []string{"x-1/a.sh", "x-1/b.sh", "x-1/README"}, files: []fileOperation{{From: "*/*.sh", To: "bin"}}, want: []string{"bin/a.sh", "bin/b.sh"}},
		{name: "glob of a directory", entries: []string{"pkg/bin/kubectl-tdb", "pkg/LICENSE"}, files: []fileOperation{{From: "p*", To: "."}}, want: []string{"pkg/LICENSE", "pkg/bin/kubectl-tdb"}},
		{name: "nothing matched", entries: []string{"kubectl-tdb"}, files: []fileOperation{{From: "LICENSE", To: "."}}, wantErr: "matches nothing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := installedFiles(tc.entries, tc.files)
			if tc.wantErr != "" {
				if !slices.ContainsFunc(problems, func(s string) bool { return strings.Contains(s, tc.wantErr) }) {
					t.Errorf("want a problem containing %q, got %q", tc.wantErr, problems)
				}
				return
			}
			if len(problems) > 0 {
				t.Errorf("problems: %q", problems)
			}
			if files := slices.Sorted(maps.Keys(got)); !slices.Equal(files, tc.want) {
				t.Errorf("installed %v, want %v", files, tc.want)
			}
		})
	}
}

type tarEntry struct {
	name     string
	mode     int64
	typeflag byte
}

func makeTarGz(t *testing.T, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		body := "content of " + e.name
		hdr := &tar.Header{Name: e.name, Mode: e.mode, Typeflag: e.typeflag}
		switch e.typeflag {
		case tar.TypeReg:
			hdr.Size = int64(len(body))
		case tar.TypeSymlink:
			hdr.Linkname = "/etc/passwd"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if e.typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCheckArchive checks the archive rules can pass and fail.
func TestCheckArchive(t *testing.T) {
	manifest, _ := renderedTemplate(t)
	p := mustParse(t, manifest)
	linux, windows := p.Spec.Platforms[0], p.Spec.Platforms[len(p.Spec.Platforms)-1]
	bin := tarEntry{"kubectl-tdb", 0o755, tar.TypeReg}
	license := tarEntry{"LICENSE", 0o644, tar.TypeReg}

	cases := []struct {
		name     string
		platform platform
		entries  []tarEntry
		wantErr  string // "" for none
	}{
		{name: "good", platform: linux, entries: []tarEntry{license, bin}},
		{name: "good, windows", platform: windows, entries: []tarEntry{license, {"kubectl-tdb.exe", 0o644, tar.TypeReg}}},
		{name: "sha256 differs", platform: linux, entries: []tarEntry{license, bin}, wantErr: "sha256 is"},
		{name: "no bin", platform: linux, entries: []tarEntry{license}, wantErr: "not among the installed files"},
		{name: "no license", platform: linux, entries: []tarEntry{bin}, wantErr: "no license"},
		{name: "bin not executable", platform: linux, entries: []tarEntry{license, {"kubectl-tdb", 0o644, tar.TypeReg}}, wantErr: "not executable"},
		{name: "climbing entry", platform: linux, entries: []tarEntry{license, bin, {"../evil", 0o644, tar.TypeReg}}, wantErr: "refuses"},
		{name: "absolute entry", platform: linux, entries: []tarEntry{license, bin, {"/evil", 0o644, tar.TypeReg}}, wantErr: "refuses"},
		{name: "symlink", platform: linux, entries: []tarEntry{license, bin, {"link", 0o777, tar.TypeSymlink}}, wantErr: "only regular files"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := makeTarGz(t, tc.entries...)
			pl := tc.platform
			pl.Sha256 = sha256Hex(data)
			if tc.wantErr == "sha256 is" {
				pl.Sha256 = fakeSum("something else")
			}
			problems := checkArchive(data, pl)
			if tc.wantErr == "" {
				if len(problems) > 0 {
					t.Errorf("problems: %q", problems)
				}
				return
			}
			if !slices.ContainsFunc(problems, func(s string) bool { return strings.Contains(s, tc.wantErr) }) {
				t.Errorf("want a problem containing %q, got %q", tc.wantErr, problems)
			}
		})
	}
	t.Run("not gzip", func(t *testing.T) {
		data := []byte("not an archive")
		pl := linux
		pl.Sha256 = sha256Hex(data)
		if problems := checkArchive(data, pl); !slices.ContainsFunc(problems, func(s string) bool { return strings.Contains(s, "not gzip") }) {
			t.Errorf("want a problem containing %q, got %q", "not gzip", problems)
		}
	})
}

// TestReleases validates every release hack/plugin-release.sh wrote under
// bin/plugin-release/<version>/: the manifest, its sums against the archives
// and sha256sums.txt, and each archive's content against its platform entry.
func TestReleases(t *testing.T) {
	manifests, err := filepath.Glob(filepath.Join("..", "..", releaseDir, "*", "tdb.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(manifests) == 0 {
		t.Skipf("no release under %s (hack/plugin-release.sh vX.Y.Z writes one)", releaseDir)
	}
	for _, file := range manifests {
		dir := filepath.Dir(file)
		version := filepath.Base(dir)
		t.Run(version, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if left := anyPlaceholder.FindAllString(string(data), -1); len(left) > 0 {
				t.Errorf("placeholders left: %v", left)
			}
			p, err := parseManifest(data)
			if err != nil {
				t.Fatalf("parsing %s: %v", file, err)
			}
			for _, problem := range validateManifest(strings.TrimSuffix(filepath.Base(file), ".yaml"), p) {
				t.Error(problem)
			}
			if p.Spec.Version != version {
				t.Errorf("spec.version is %q in the release directory %s", p.Spec.Version, version)
			}

			sums := readSums(t, filepath.Join(dir, "sha256sums.txt"))
			var archives []string
			for i, pl := range p.Spec.Platforms {
				archive := path.Base(pl.URI)
				archives = append(archives, archive)
				if want := releasesURL + "/" + version + "/" + archive; pl.URI != want {
					t.Errorf("platforms[%d]: uri %q, want %q", i, pl.URI, want)
				}
				if sums[archive] != pl.Sha256 {
					t.Errorf("platforms[%d]: sha256 %s, sha256sums.txt says %q", i, pl.Sha256, sums[archive])
				}
				b, err := os.ReadFile(filepath.Join(dir, archive))
				if err != nil {
					t.Errorf("platforms[%d]: %v", i, err)
					continue
				}
				for _, problem := range checkArchive(b, pl) {
					t.Errorf("platforms[%d] (%s): %s", i, archive, problem)
				}
			}
			slices.Sort(archives)
			if listed := slices.Sorted(maps.Keys(sums)); !slices.Equal(listed, archives) {
				t.Errorf("sha256sums.txt lists %v, the manifest %v", listed, archives)
			}
			onDisk, _ := filepath.Glob(filepath.Join(dir, "*.tar.gz"))
			for i := range onDisk {
				onDisk[i] = filepath.Base(onDisk[i])
			}
			if !slices.Equal(onDisk, archives) {
				t.Errorf("archives in %s: %v, the manifest's: %v", dir, onDisk, archives)
			}
		})
	}
}

// readSums reads a `sha256sum` file: archive name to sum.
func readSums(t *testing.T, name string) map[string]string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, file, ok := strings.Cut(sc.Text(), "  ")
		if !ok || !validSHA256.MatchString(sum) {
			t.Errorf("%s: bad line %q", name, sc.Text())
			continue
		}
		sums[file] = sum
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sums
}
