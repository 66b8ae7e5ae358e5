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

package dockerfile

import (
	"fmt"
	"regexp"
	"strings"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, COPY, ...
	args string
}

// stage is one FROM and the instructions up to the next FROM.
type stage struct {
	image  string // the FROM image, without --platform
	name   string // the AS name, if any
	instrs []instruction
}

// parseDockerfile splits a Dockerfile into stages. It understands what this
// project's Dockerfiles use: comments, backslash continuations and
// `FROM [--platform=...] image [AS name]`; it is not a BuildKit parser.
func parseDockerfile(text string) ([]stage, error) {
	var (
		stages  []stage
		pending string
	)
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if pending == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if pending != "" && strings.HasPrefix(trimmed, "#") {
			continue // comment lines inside a continuation are dropped
		}
		if strings.HasSuffix(trimmed, "\\") {
			pending += strings.TrimSuffix(trimmed, "\\") + " "
			continue
		}
		full := strings.TrimSpace(pending + trimmed)
		pending = ""
		if full == "" {
			continue
		}
		cmd, args, _ := strings.Cut(full, " ")
		in := instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			words, err := shellWords(in.args)
			if err != nil {
				return nil, fmt.Errorf("FROM %s: %w", in.args, err)
			}
			var st stage
			for i := 0; i < len(words); i++ {
				switch {
				case strings.HasPrefix(words[i], "--"):
				case strings.EqualFold(words[i], "AS") && i+1 < len(words):
					st.name = words[i+1]
					i++
				case st.image == "":
					st.image = words[i]
				}
			}
			if st.image == "" {
				return nil, fmt.Errorf("FROM without an image: %q", full)
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			if in.cmd == "ARG" {
				continue // global ARGs before the first FROM
			}
			return nil, fmt.Errorf("%s before the first FROM", in.cmd)
		}
		stages[len(stages)-1].instrs = append(stages[len(stages)-1].instrs, in)
	}
	if pending != "" {
		return nil, fmt.Errorf("the Dockerfile ends inside a continuation line")
	}
	if len(stages) == 0 {
		return nil, fmt.Errorf("no FROM")
	}
	return stages, nil
}

// shellWords splits a command line the way a POSIX shell splits words:
// blanks separate, single quotes are literal, double quotes keep blanks and
// honour backslash escapes.
func shellWords(s string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool
		quote   rune
		escaped bool
	)
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, fmt.Errorf("unterminated quote or escape in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// goBuild is a `go build` command line taken apart.
type goBuild struct {
	env   map[string]string // VAR=value words before `go`
	flags map[string]string // -flag -> value ("" for boolean flags); -o excluded
	out   string            // the -o argument
	pkgs  []string
}

// goBuildValueFlags are the go build flags that take a value.
var goBuildValueFlags = map[string]bool{
	"-o": true, "-ldflags": true, "-gcflags": true, "-asmflags": true, "-tags": true,
	"-mod": true, "-modfile": true, "-buildmode": true, "-compiler": true, "-gccgoflags": true,
	"-installsuffix": true, "-p": true, "-pkgdir": true, "-toolexec": true, "-overlay": true,
	"-pgo": true, "-buildvcs": true, "-C": true,
}

var envWord = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// parseGoBuild finds the `go build` in a shell command (possibly one of
// several joined by && or ;) and takes it apart.
func parseGoBuild(command string) (goBuild, error) {
	for _, part := range regexp.MustCompile(`&&|;|\|\|`).Split(command, -1) {
		words, err := shellWords(part)
		if err != nil {
			return goBuild{}, err
		}
		gb := goBuild{env: map[string]string{}, flags: map[string]string{}}
		i := 0
		for ; i < len(words) && envWord.MatchString(words[i]); i++ {
			k, v, _ := strings.Cut(words[i], "=")
			gb.env[k] = v
		}
		if i+1 >= len(words) || words[i] != "go" || words[i+1] != "build" {
			continue
		}
		for i += 2; i < len(words); i++ {
			w := words[i]
			if !strings.HasPrefix(w, "-") {
				gb.pkgs = append(gb.pkgs, w)
				continue
			}
			name, value, hasValue := strings.Cut(w, "=")
			name = "-" + strings.TrimLeft(name, "-")
			if !hasValue && goBuildValueFlags[name] {
				if i+1 >= len(words) {
					return goBuild{}, fmt.Errorf("%s without a value in %q", name, part)
				}
				value = words[i+1]
				i++
			}
			if name == "-o" {
				gb.out = value
				continue
			}
			gb.flags[name] = value
		}
		return gb, nil
	}
	return goBuild{}, fmt.Errorf("no `go build` in %q", command)
}

// makeVars reads the simple variable assignments of a Makefile
// (NAME := value, NAME = value, NAME ?= value; the first one wins as with ?=).
func makeVars(makefile string) map[string]string {
	vars := map[string]string{}
	assign := regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*(\?=|:=|::=|=)\s*(.*)$`)
	for _, line := range strings.Split(makefile, "\n") {
		m := assign.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, seen := vars[m[1]]; !seen {
			vars[m[1]] = strings.TrimSpace(m[3])
		}
	}
	return vars
}

// makeRecipe returns the recipe lines of a Makefile target.
func makeRecipe(makefile, target string) []string {
	var (
		lines []string
		in    bool
	)
	rule := regexp.MustCompile(`^` + regexp.QuoteMeta(target) + `\s*:([^=]|$)`)
	for _, line := range strings.Split(makefile, "\n") {
		switch {
		case rule.MatchString(line):
			in = true
		case in && strings.HasPrefix(line, "\t"):
			lines = append(lines, strings.TrimSpace(line))
		case in:
			return lines
		}
	}
	return lines
}

// expandMake substitutes $(VAR) references (recursively, a few levels deep).
func expandMake(s string, vars map[string]string) string {
	ref := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	for range 5 {
		next := ref.ReplaceAllStringFunc(s, func(m string) string {
			if v, ok := vars[m[2:len(m)-1]]; ok {
				return v
			}
			return m
		})
		if next == s {
			break
		}
		s = next
	}
	return s
}

// goModVersion is the Go version a module builds with: the toolchain line
// if there is one, else the go directive.
func goModVersion(gomod string) (string, error) {
	var goLine, toolchain string
	for _, line := range strings.Split(gomod, "\n") {
		fields := strings.Fields(line)
		if len(fields) != 2 {
			continue
		}
		switch fields[0] {
		case "go":
			goLine = fields[1]
		case "toolchain":
			toolchain = strings.TrimPrefix(fields[1], "go")
		}
	}
	if toolchain != "" {
		return toolchain, nil
	}
	if goLine == "" {
		return "", fmt.Errorf("go.mod has neither a toolchain nor a go line")
	}
	return goLine, nil
}
