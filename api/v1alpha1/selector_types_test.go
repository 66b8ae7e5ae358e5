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

package v1alpha1

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A selector written for metav1.LabelSelector reads the same as ours, and
// AsMeta gives back what metav1 would have read.
func TestLabelSelectorKeepsTheShapeOfMetaV1(t *testing.T) {
	tests := []struct {
		name string
		json string
	}{
		{name: "empty", json: `{}`},
		{name: "matchLabels", json: `{"matchLabels":{"app":"web","example.com/tier":""}}`},
		{name: "matchExpressions", json: `{"matchExpressions":[{"key":"app","operator":"In","values":["web","db"]},{"key":"spot","operator":"DoesNotExist"}]}`},
		{name: "both", json: `{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"track","operator":"NotIn","values":["canary"]}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var meta metav1.LabelSelector
			if err := json.Unmarshal([]byte(tc.json), &meta); err != nil {
				t.Fatal(err)
			}
			var ours LabelSelector
			if err := json.Unmarshal([]byte(tc.json), &ours); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&meta, ours.AsMeta()); diff != "" {
				t.Errorf("AsMeta (-metav1 +ours):\n%s", diff)
			}
			metaJSON, _ := json.Marshal(&meta)
			oursJSON, _ := json.Marshal(&ours)
			if string(metaJSON) != string(oursJSON) {
				t.Errorf("JSON: metav1 %s, ours %s", metaJSON, oursJSON)
			}
		})
	}
}

func TestAsMetaOfNilIsNil(t *testing.T) {
	var s *LabelSelector
	if got := s.AsMeta(); got != nil {
		t.Errorf("AsMeta of nil = %v, want nil (a selector of nothing)", got)
	}
}

// The conversion is used on objects of the informer cache, which must not
// change through it.
func TestAsMetaSharesNothing(t *testing.T) {
	s := &LabelSelector{
		MatchLabels:      map[string]LabelValue{"app": "web"},
		MatchExpressions: []LabelSelectorRequirement{{Key: "track", Operator: metav1.LabelSelectorOpIn, Values: []string{"stable"}}},
	}
	m := s.AsMeta()
	m.MatchLabels["app"] = "db"
	m.MatchExpressions[0].Values[0] = "canary"
	want := &LabelSelector{
		MatchLabels:      map[string]LabelValue{"app": "web"},
		MatchExpressions: []LabelSelectorRequirement{{Key: "track", Operator: metav1.LabelSelectorOpIn, Values: []string{"stable"}}},
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("selector changed through AsMeta (-want +got):\n%s", diff)
	}
}

func TestSetAsLabelSelector(t *testing.T) {
	got := SetAsLabelSelector(map[string]string{"app": "web", "tier": ""}).AsMeta()
	if diff := cmp.Diff(metav1.SetAsLabelSelector(map[string]string{"app": "web", "tier": ""}), got); diff != "" {
		t.Errorf("SetAsLabelSelector (-metav1 +ours):\n%s", diff)
	}
}
