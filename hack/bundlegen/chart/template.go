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

package chart

import (
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// templateWriter turns one object, decoded generically, into the text of a
// Helm template. Values that become template expressions are replaced in
// the object by placeholder tokens before it is marshalled (so the YAML
// keeps its sorted keys and indentation), and the tokens are replaced by the
// template text afterwards.
type templateWriter struct {
	inline map[string]string
	blocks map[string]blockFunc
	n      int
	// err is the first error of a block function.
	err error
}

// blockFunc renders a whole line of YAML that held a block placeholder: key
// is the mapping key on that line ("" for a list item), and indent the
// column where the key (or the list item's dash) starts.
type blockFunc func(indent int, key string) string

func newTemplateWriter() *templateWriter {
	return &templateWriter{inline: map[string]string{}, blocks: map[string]blockFunc{}}
}

// inlineValue returns a placeholder for a scalar whose text is the template
// text t.
func (w *templateWriter) inlineValue(t string) string {
	w.n++
	token := fmt.Sprintf("HELMINLINE%04dX", w.n)
	w.inline[token] = t
	return token
}

// blockValue returns a placeholder for a value (or list item) rendered by f,
// key line included.
func (w *templateWriter) blockValue(f blockFunc) string {
	w.n++
	token := fmt.Sprintf("HELMBLOCK%04dX", w.n)
	w.blocks[token] = f
	return token
}

var blockLine = regexp.MustCompile(`(?m)^( *)(- )?([^\s:]+: )?(HELMBLOCK[0-9]{4}X)$`)

// render marshals the object and replaces the placeholders.
func (w *templateWriter) render(obj map[string]any) (string, error) {
	data, err := yaml.Marshal(obj)
	if err != nil {
		return "", err
	}
	text := string(data)
	var missing []string
	text = blockLine.ReplaceAllStringFunc(text, func(line string) string {
		m := blockLine.FindStringSubmatch(line)
		f, ok := w.blocks[m[4]]
		if !ok {
			missing = append(missing, m[4])
			return line
		}
		delete(w.blocks, m[4])
		indent := len(m[1])
		key := strings.TrimSuffix(m[3], ": ")
		if m[2] != "" {
			if key != "" {
				// "- key: BLOCK": the key of a list item's first field.
				return m[1] + "-" + strings.TrimPrefix(f(indent+2, key), strings.Repeat(" ", indent+1))
			}
			return f(indent, "")
		}
		return f(indent, key)
	})
	if w.err != nil {
		return "", w.err
	}
	text = w.expand(text)
	if len(missing) > 0 || len(w.blocks) > 0 {
		return "", fmt.Errorf("block placeholders not on a line of their own: %v %d", missing, len(w.blocks))
	}
	if strings.Contains(text, "HELMINLINE") || strings.Contains(text, "HELMBLOCK") {
		return "", fmt.Errorf("unreplaced placeholder in\n%s", text)
	}
	return text, nil
}

// expand replaces the inline placeholders in text by their template text.
func (w *templateWriter) expand(text string) string {
	for token, t := range w.inline {
		text = strings.ReplaceAll(text, token, t)
	}
	return text
}

// pad returns n spaces.
func pad(n int) string { return strings.Repeat(" ", n) }

// keyLine is "key:" at indent, or nothing for a list item.
func keyLine(indent int, key string) string {
	if key == "" {
		return ""
	}
	return pad(indent) + key + ":"
}

// literalYAML renders v as YAML indented to indent, one line per line.
func literalYAML(v any, indent int) (string, error) {
	data, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, l := range lines {
		lines[i] = pad(indent) + l
	}
	return strings.Join(lines, "\n"), nil
}

// mapWithInclude renders a label map: its literal entries, then the named
// template's entries (an include that prints "key: value" lines).
func mapWithInclude(literal map[string]any, include string) (blockFunc, error) {
	var lit string
	if len(literal) > 0 {
		var err error
		if lit, err = literalYAML(literal, 0); err != nil {
			return nil, err
		}
	}
	return func(indent int, key string) string {
		var b strings.Builder
		b.WriteString(keyLine(indent, key))
		for _, l := range strings.Split(lit, "\n") {
			if l != "" {
				b.WriteString("\n" + pad(indent+2) + l)
			}
		}
		fmt.Fprintf(&b, "\n%s{{- include %q . | nindent %d }}", pad(indent+2), include, indent+2)
		return b.String()
	}, nil
}

// toYAMLValue renders key with the YAML of a values expression under it.
func toYAMLValue(expr string) blockFunc {
	return func(indent int, key string) string {
		return fmt.Sprintf("%s\n%s{{- toYaml %s | nindent %d }}", keyLine(indent, key), pad(indent+2), expr, indent+2)
	}
}

// optionalToYAML renders key only when the values expression is not empty.
func optionalToYAML(expr string) blockFunc {
	return func(indent int, key string) string {
		return fmt.Sprintf("%s{{- with %s }}\n%s\n%s{{- toYaml . | nindent %d }}\n%s{{- end }}",
			pad(indent), expr, keyLine(indent, key), pad(indent+2), indent+2, pad(indent))
	}
}

// alternative is one branch of switchBlock: a template condition (empty for
// the final else) and the value rendered under the line's key (or as the list
// item) when it holds.
type alternative struct {
	cond  string
	value any
}

// switchBlock renders one of several values by a chain of template
// conditions.
func (w *templateWriter) switchBlock(alts []alternative) blockFunc {
	return func(indent int, key string) string {
		var b strings.Builder
		for i, a := range alts {
			switch {
			case i == 0:
				fmt.Fprintf(&b, "%s{{- if %s }}\n", pad(indent), a.cond)
			case a.cond == "":
				fmt.Fprintf(&b, "%s{{- else }}\n", pad(indent))
			default:
				fmt.Fprintf(&b, "%s{{- else if %s }}\n", pad(indent), a.cond)
			}
			var v any = map[string]any{key: a.value}
			if key == "" {
				v = []any{a.value}
			}
			text, err := literalYAML(v, indent)
			if err != nil && w.err == nil {
				w.err = err
			}
			b.WriteString(w.expand(text) + "\n")
		}
		fmt.Fprintf(&b, "%s{{- end }}", pad(indent))
		return b.String()
	}
}
