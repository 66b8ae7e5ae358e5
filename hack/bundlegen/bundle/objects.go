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

package bundle

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Object is one Kubernetes object of a multi-document YAML stream, kept as
// generic JSON so that nothing is added or dropped on the way through.
type Object struct {
	APIVersion string
	Kind       string
	Name       string
	Namespace  string
	// JSON is the object as JSON, for strict decoding into a typed struct.
	JSON []byte
	// Fields is the object decoded generically.
	Fields map[string]any
}

// Group is the object's API group ("" for the core group).
func (o Object) Group() string {
	if g, _, ok := strings.Cut(o.APIVersion, "/"); ok {
		return g
	}
	return ""
}

// ID names the object in messages.
func (o Object) ID() string {
	if o.Namespace != "" {
		return fmt.Sprintf("%s %s/%s", o.Kind, o.Namespace, o.Name)
	}
	return fmt.Sprintf("%s %s", o.Kind, o.Name)
}

// ParseObjects splits a multi-document YAML stream (what `kustomize build`
// prints) into objects, in order. Empty documents are skipped.
func ParseObjects(data []byte) ([]Object, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []Object
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading YAML document %d: %w", len(objs)+1, err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("YAML document %d: %w", len(objs)+1, err)
		}
		if t := bytes.TrimSpace(js); len(t) == 0 || string(t) == "null" {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(js, &fields); err != nil {
			return nil, fmt.Errorf("YAML document %d is not an object: %w", len(objs)+1, err)
		}
		o := Object{JSON: js, Fields: fields}
		o.APIVersion, _ = fields["apiVersion"].(string)
		o.Kind, _ = fields["kind"].(string)
		if meta, ok := fields["metadata"].(map[string]any); ok {
			o.Name, _ = meta["name"].(string)
			o.Namespace, _ = meta["namespace"].(string)
		}
		if o.APIVersion == "" || o.Kind == "" || o.Name == "" {
			return nil, fmt.Errorf("YAML document %d has no apiVersion, kind or metadata.name", len(objs)+1)
		}
		objs = append(objs, o)
	}
}

// decodeStrict decodes JSON into v, refusing fields v does not have.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the object")
	}
	return nil
}

// toYAML renders v as YAML with sorted keys, so equal input gives equal bytes.
func toYAML(v any) ([]byte, error) {
	return yaml.Marshal(v)
}
