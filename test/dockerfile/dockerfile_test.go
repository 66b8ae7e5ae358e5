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

// Package dockerfile checks the manager's Dockerfile without a container
// engine: the image it describes must build the binary `make build` builds,
// with the Go version go.mod names, and run it as a non-root user in an
// empty (or distroless) image.
package dockerfile

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/tdb-operator/tdb-operator"

// requiredLabels are the OCI annotations the final image must carry.
var requiredLabels = []string{
	"org.opencontainers.image.title",
	"org.opencontainers.image.description",
	"org.opencontainers.image.source",
	"org.opencontainers.image.licenses",
	"org.opencontainers.image.version",
}

// goBuildEnvAllowedExtra are the environment settings the image build may
// add to `make build`'s: the target platform.
var goBuildEnvAllowedExtra = map[string]bool{"GOOS": true, "GOARCH": true, "GOARM": true}

// checkDockerfile returns every way the Dockerfile breaks the rules above.
func checkDockerfile(dockerfile, gomod, makefile string) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	stages, err := parseDockerfile(dockerfile)
	if err != nil {
		return []string{"parsing the Dockerfile: " + err.Error()}
	}

	// The build stage is the one that runs `go build`.
	var (
		builder     *stage
		dockerBuild goBuild
	)
	for i := range stages {
		for _, in := range stages[i].instrs {
			if in.cmd != "RUN" || !strings.Contains(in.args, "go build") {
				continue
			}
			gb, err := parseGoBuild(in.args)
			if err != nil {
				fail("build stage: %v", err)
				continue
			}
			builder, dockerBuild = &stages[i], gb
		}
	}
	final := stages[len(stages)-1]
	if builder == nil {
		return append(problems, "no stage runs `go build`")
	}
	if builder == &stages[len(stages)-1] {
		fail("the final stage %q is the build stage: the image would ship the Go toolchain", final.image)
	}

	// Go version: the golang image tag equals go.mod's toolchain.
	want, err := goModVersion(gomod)
	if err != nil {
		fail("go.mod: %v", err)
	}
	repo, tag, _ := strings.Cut(strings.SplitN(builder.image, "@", 2)[0], ":")
	tagVersion, _, _ := strings.Cut(tag, "-") // 1.26.8-bookworm -> 1.26.8
	switch {
	case path.Base(repo) != "golang":
		fail("the build stage's image %q is not a golang image", builder.image)
	case tagVersion != want:
		fail("the build stage uses Go %q (%s) but go.mod says %q", tagVersion, builder.image, want)
	}

	// The build line: same env, flags and package as `make build`.
	vars := makeVars(makefile)
	var makeBuild *goBuild
	for _, line := range makeRecipe(makefile, "build") {
		if !strings.Contains(expandMake(line, vars), "go build") {
			continue
		}
		gb, err := parseGoBuild(expandMake(line, vars))
		if err != nil {
			fail("make build: %v", err)
			break
		}
		makeBuild = &gb
	}
	if makeBuild == nil {
		fail("the Makefile's build target runs no `go build`")
	} else {
		for k, v := range makeBuild.env {
			if got, ok := dockerBuild.env[k]; !ok || got != v {
				fail("make build sets %s=%s, the Dockerfile's go build %s", k, v, describeEnv(dockerBuild.env, k))
			}
		}
		for k, v := range dockerBuild.env {
			if _, ok := makeBuild.env[k]; !ok && !goBuildEnvAllowedExtra[k] {
				fail("the Dockerfile's go build sets %s=%s, which make build does not", k, v)
			}
		}
		if !equalMaps(makeBuild.flags, dockerBuild.flags) {
			fail("go build flags differ: make build %v, Dockerfile %v", makeBuild.flags, dockerBuild.flags)
		}
		if !equalPkgs(makeBuild.pkgs, dockerBuild.pkgs) {
			fail("go build packages differ: make build %v, Dockerfile %v", makeBuild.pkgs, dockerBuild.pkgs)
		}
	}

	// The final stage: empty or distroless, the binary copied from the build
	// stage, a numeric non-root user, the labels.
	if final.image != "scratch" && !strings.Contains(final.image, "distroless/") {
		fail("the final stage's base %q is neither scratch nor distroless", final.image)
	}
	copied := false
	for _, in := range final.instrs {
		if in.cmd != "COPY" {
			continue
		}
		words, _ := shellWords(in.args)
		from := ""
		var srcs []string
		for _, w := range words {
			if v, ok := strings.CutPrefix(w, "--from="); ok {
				from = v
			} else if !strings.HasPrefix(w, "--") {
				srcs = append(srcs, w)
			}
		}
		if len(srcs) > 1 && (from == builder.name || from == builder.image) {
			for _, s := range srcs[:len(srcs)-1] {
				if dockerBuild.out != "" && path.Base(s) == path.Base(dockerBuild.out) {
					copied = true
				}
			}
		}
	}
	if !copied {
		fail("the final stage does not COPY the built binary %q from the build stage", dockerBuild.out)
	}

	user := ""
	labels := map[string]string{}
	for _, in := range final.instrs {
		switch in.cmd {
		case "USER":
			user = in.args
		case "LABEL":
			words, err := shellWords(in.args)
			if err != nil {
				fail("LABEL: %v", err)
			}
			for _, w := range words {
				k, v, _ := strings.Cut(w, "=")
				labels[k] = v
			}
		}
	}
	if msg := nonRootUser(user); msg != "" {
		fail("the final stage's USER: %s", msg)
	}
	for _, l := range requiredLabels {
		if strings.TrimSpace(labels[l]) == "" {
			fail("the final stage has no %s label", l)
		}
	}
	return problems
}

func describeEnv(env map[string]string, k string) string {
	if v, ok := env[k]; ok {
		return "sets " + k + "=" + v
	}
	return "does not set it"
}

// nonRootUser explains what is wrong with a USER value, or returns "".
// Kubernetes' runAsNonRoot can only verify a numeric user.
func nonRootUser(user string) string {
	if user == "" {
		return "missing: the image would run as root"
	}
	uid, gid, hasGID := strings.Cut(user, ":")
	n, err := strconv.Atoi(uid)
	switch {
	case err != nil:
		return fmt.Sprintf("%q is not numeric, so runAsNonRoot cannot verify it", user)
	case n == 0:
		return fmt.Sprintf("%q is root", user)
	}
	if hasGID {
		if _, err := strconv.Atoi(gid); err != nil {
			return fmt.Sprintf("group %q is not numeric", gid)
		}
	}
	return ""
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func equalPkgs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if path.Clean(a[i]) != path.Clean(b[i]) {
			return false
		}
	}
	return true
}

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDockerfile(t *testing.T) {
	dockerfile := readRepoFile(t, "Dockerfile")
	gomod := readRepoFile(t, "go.mod")
	makefile := readRepoFile(t, "Makefile")
	goVersion, err := goModVersion(gomod)
	if err != nil {
		t.Fatal(err)
	}

	// replace edits the real Dockerfile (or go.mod, or Makefile) and fails
	// the test if the text to edit has gone, so no case passes vacuously.
	replace := func(text, old, new string) string {
		t.Helper()
		if !strings.Contains(text, old) {
			t.Fatalf("the case edits %q, which is no longer in the file", old)
		}
		return strings.Replace(text, old, new, 1)
	}
	tests := []struct {
		name       string
		dockerfile string
		gomod      string
		makefile   string
		wantErr    string // a substring of one problem; "" means none
	}{
		{name: "the committed Dockerfile"},
		{
			name:       "older Go in the build stage",
			dockerfile: replace(dockerfile, "golang:"+goVersion, "golang:1.25.4"),
			wantErr:    `uses Go "1.25.4"`,
		},
		{
			name:    "go.mod moves to a newer toolchain",
			gomod:   replace(gomod, "toolchain go"+goVersion, "toolchain go1.27.1"),
			wantErr: `go.mod says "1.27.1"`,
		},
		{
			name:       "final stage is a full distribution",
			dockerfile: replace(dockerfile, "FROM scratch", "FROM debian:13"),
			wantErr:    "neither scratch nor distroless",
		},
		{
			name:       "distroless final stage is fine",
			dockerfile: replace(dockerfile, "FROM scratch", "FROM example.invalid/distroless/static:nonroot"),
		},
		{
			name:       "runs as root",
			dockerfile: replace(dockerfile, "USER 65532:65532", "USER 0"),
			wantErr:    "is root",
		},
		{
			name:       "user by name",
			dockerfile: replace(dockerfile, "USER 65532:65532", "USER nonroot"),
			wantErr:    "not numeric",
		},
		{
			name:       "no USER",
			dockerfile: replace(dockerfile, "USER 65532:65532\n", ""),
			wantErr:    "would run as root",
		},
		{
			name:       "another package",
			dockerfile: replace(dockerfile, "-o manager ./cmd", "-o manager ./test/demo"),
			wantErr:    "go build packages differ",
		},
		{
			name:       "debug symbols kept",
			dockerfile: replace(dockerfile, `-ldflags "-s -w"`, `-ldflags "-w"`),
			wantErr:    "go build flags differ",
		},
		{
			name:       "local paths kept",
			dockerfile: replace(dockerfile, "go build -trimpath", "go build"),
			wantErr:    "go build flags differ",
		},
		{
			name:       "cgo enabled",
			dockerfile: replace(dockerfile, "CGO_ENABLED=0 ", ""),
			wantErr:    "make build sets CGO_ENABLED=0",
		},
		{
			name:     "make build drifts from the image",
			makefile: replace(makefile, `GO_BUILD_FLAGS := -trimpath -ldflags "-s -w"`, `GO_BUILD_FLAGS := -trimpath -race -ldflags "-s -w"`),
			wantErr:  "go build flags differ",
		},
		{
			name:       "binary not copied",
			dockerfile: replace(dockerfile, "COPY --from=builder /workspace/manager /manager", "COPY --from=builder /workspace/go.mod /go.mod"),
			wantErr:    "does not COPY the built binary",
		},
		{
			name:       "no licence label",
			dockerfile: replace(dockerfile, `org.opencontainers.image.licenses="Apache-2.0"`, `org.example.licence="Apache-2.0"`),
			wantErr:    "no org.opencontainers.image.licenses label",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			df, gm, mk := dockerfile, gomod, makefile
			if tc.dockerfile != "" {
				df = tc.dockerfile
			}
			if tc.gomod != "" {
				gm = tc.gomod
			}
			if tc.makefile != "" {
				mk = tc.makefile
			}
			problems := checkDockerfile(df, gm, mk)
			if tc.wantErr == "" {
				if len(problems) > 0 {
					t.Errorf("want no problems, got:\n%s", strings.Join(problems, "\n"))
				}
				return
			}
			for _, p := range problems {
				if strings.Contains(p, tc.wantErr) {
					return
				}
			}
			t.Errorf("want a problem containing %q, got %q", tc.wantErr, problems)
		})
	}
}

// Every package of this module that the manager imports must be copied into
// the build stage, or the image build fails where `make build` succeeds.
func TestDockerfileCopiesTheManagersSources(t *testing.T) {
	dockerfile := readRepoFile(t, "Dockerfile")
	makefile := readRepoFile(t, "Makefile")
	stages, err := parseDockerfile(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	copied := map[string]bool{}
	for _, st := range stages {
		for _, in := range st.instrs {
			if in.cmd != "COPY" || strings.Contains(in.args, "--from") {
				continue
			}
			words, err := shellWords(in.args)
			if err != nil {
				t.Fatal(err)
			}
			for _, src := range words[:len(words)-1] {
				copied[path.Clean(src)] = true
			}
		}
	}
	pkg := makeVars(makefile)["MANAGER_PKG"]
	if pkg == "" {
		t.Fatal("the Makefile has no MANAGER_PKG")
	}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg)
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	for _, imp := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(imp, modulePath+"/")
		if !ok {
			continue
		}
		top, _, _ := strings.Cut(rel, "/")
		if !copied[top] && !copied[rel] {
			t.Errorf("the manager imports %s, but the Dockerfile does not COPY %s/", imp, top)
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if !copied[f] {
			t.Errorf("the Dockerfile does not COPY %s", f)
		}
	}
}
