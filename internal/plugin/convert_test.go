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

package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/predict"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// zpdbYAML is a ZoneAwarePodDisruptionBudget mimir/name whose spec is the
// given YAML lines (indented by the caller for spec).
func zpdbYAML(name, spec string) string {
	return fmt.Sprintf(`apiVersion: rollout-operator.grafana.com/v1
kind: ZoneAwarePodDisruptionBudget
metadata:
  name: %s
  namespace: mimir
spec:
%s`, name, spec)
}

const ingesterSelector = `  selector:
    matchLabels:
      rollout-group: ingester
`

// converted is the TopologyDisruptionBudget mimir/name convert prints for
// spec.
func converted(name string, spec policyv1alpha1.TopologyDisruptionBudgetSpec) policyv1alpha1.TopologyDisruptionBudget {
	return policyv1alpha1.TopologyDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy.tdb.dev/v1alpha1", Kind: "TopologyDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "mimir"},
		Spec:       spec,
	}
}

var ingesters = policyv1alpha1.SetAsLabelSelector(map[string]string{"rollout-group": "ingester"})

// zoneSpec is zone mode's budget: the StatefulSets are the domains, one
// disrupted at a time.
func zoneSpec(maxUnavailable intstr.IntOrString) policyv1alpha1.TopologyDisruptionBudgetSpec {
	return policyv1alpha1.TopologyDisruptionBudgetSpec{
		Selector:            ingesters,
		Partition:           &policyv1alpha1.PartitionSource{PodNameRegex: `(.+)-[0-9]+`},
		MaxUnavailable:      &maxUnavailable,
		MaxDisruptedDomains: ptrTo(int32(1)),
	}
}

// parsePrinted decodes convert's output strictly into our API type, as
// kubectl apply would send it, and checks that the operator can evaluate
// every budget.
func parsePrinted(t *testing.T, out string) []policyv1alpha1.TopologyDisruptionBudget {
	t.Helper()
	var got []policyv1alpha1.TopologyDisruptionBudget
	for i, doc := range strings.Split(out, "---\n") {
		var tdb policyv1alpha1.TopologyDisruptionBudget
		if err := yaml.UnmarshalStrict([]byte(doc), &tdb); err != nil {
			t.Fatalf("printed document %d does not decode strictly: %v\n%s", i+1, err, doc)
		}
		if err := budget.ParseCoverage(&tdb).Err(); err != nil {
			t.Errorf("printed document %d is refused by the budget engine: %v\n%s", i+1, err, doc)
		}
		got = append(got, tdb)
	}
	return got
}

// runConvert runs kubectl tdb with args, stdin on standard input.
func runConvert(stdin string, args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	cmd := NewCommand(genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
	cmd.SetArgs(args)
	err := cmd.Execute()
	var e *ExitError
	if err != nil && (!errors.As(err, &e) || e.Err != nil) {
		errOut.WriteString("error: " + err.Error() + "\n")
	}
	return out.String(), errOut.String(), ExitCode(err)
}

// convert reads manifests and prints their TopologyDisruptionBudgets,
// every one of which decodes strictly into our API and parses; or, when
// any field cannot be carried, prints nothing and names each document and
// field on standard error with exit status 1.
func TestConvert(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input string
		want  []policyv1alpha1.TopologyDisruptionBudget
		// errs are substrings of standard error, each naming a document
		// and a field; notes likewise for a conversion that succeeds.
		errs  []string
		notes []string
	}{{
		name:  "zone mode",
		input: zpdbYAML("ingester-rollout", "  maxUnavailable: 2\n"+ingesterSelector),
		want:  []policyv1alpha1.TopologyDisruptionBudget{converted("ingester-rollout", zoneSpec(intstr.FromInt32(2)))},
	}, {
		name:  "zone mode, the peer's default maxUnavailable carried",
		input: zpdbYAML("ingester-rollout", ingesterSelector),
		want:  []policyv1alpha1.TopologyDisruptionBudget{converted("ingester-rollout", zoneSpec(intstr.FromInt32(1)))},
	}, {
		name: "partition mode",
		input: zpdbYAML("ingester-rollout", `  maxUnavailable: 1
  podNamePartitionRegex: '[a-z\-]+-zone-[a-z]-([0-9]+)'
  podNameRegexGroup: 1
`+ingesterSelector),
		want: []policyv1alpha1.TopologyDisruptionBudget{converted("ingester-rollout", policyv1alpha1.TopologyDisruptionBudgetSpec{
			Selector:       ingesters,
			Partition:      &policyv1alpha1.PartitionSource{PodNameRegex: `[a-z\-]+-zone-[a-z]-([0-9]+)`, PodNameRegexGroup: ptrTo(int32(1))},
			MaxUnavailable: ptrTo(intstr.FromInt32(1)),
		})},
	}, {
		name: "partition mode, the second group, a delay",
		input: zpdbYAML("ingester-rollout", `  podNamePartitionRegex: '[a-z\-]+-(zone-[a-z])-([0-9]+)'
  podNameRegexGroup: 2
  crossZoneEvictionDelay: 20m
`+ingesterSelector),
		want: []policyv1alpha1.TopologyDisruptionBudget{converted("ingester-rollout", policyv1alpha1.TopologyDisruptionBudgetSpec{
			Selector:        ingesters,
			Partition:       &policyv1alpha1.PartitionSource{PodNameRegex: `[a-z\-]+-(zone-[a-z])-([0-9]+)`, PodNameRegexGroup: ptrTo(int32(2))},
			MaxUnavailable:  ptrTo(intstr.FromInt32(1)),
			MinReadySeconds: 1200,
		})},
	}, {
		name:  "percentage: kept pods rounded up, so the unavailable rounded down as the peer does",
		input: zpdbYAML("ingester-rollout", "  maxUnavailablePercentage: 30\n"+ingesterSelector),
		want: []policyv1alpha1.TopologyDisruptionBudget{converted("ingester-rollout", policyv1alpha1.TopologyDisruptionBudgetSpec{
			Selector:            ingesters,
			Partition:           &policyv1alpha1.PartitionSource{PodNameRegex: `(.+)-[0-9]+`},
			MinAvailable:        ptrTo(intstr.FromString("70%")),
			MaxDisruptedDomains: ptrTo(int32(1)),
		})},
		notes: []string{"document 1 (ZoneAwarePodDisruptionBudget mimir/ingester-rollout): spec.maxUnavailablePercentage 30 became minAvailable 70%", "fewer than 4 pods allows 0 where the peer allows 1"},
	}, {
		name:  "0% allows nothing",
		input: zpdbYAML("ingester-rollout", "  maxUnavailablePercentage: 0\n"+ingesterSelector),
		want:  []policyv1alpha1.TopologyDisruptionBudget{converted("ingester-rollout", zoneSpec(intstr.FromInt32(0)))},
	}, {
		name: "several labels; labels and annotations kept, kubectl's record and the server's fields dropped",
		input: `apiVersion: rollout-operator.grafana.com/v1
kind: ZoneAwarePodDisruptionBudget
metadata:
  name: store-gateway
  labels: {team: storage}
  annotations:
    owner: storage
    kubectl.kubernetes.io/last-applied-configuration: '{}'
  uid: 0b5c9f7e-0000-0000-0000-000000000000
  resourceVersion: "42"
  generation: 3
  creationTimestamp: "2026-01-01T00:00:00Z"
spec:
  selector:
    matchLabels: {rollout-group: store-gateway, app.kubernetes.io/part-of: mimir}
status: {}
`,
		want: []policyv1alpha1.TopologyDisruptionBudget{{
			TypeMeta: metav1.TypeMeta{APIVersion: "policy.tdb.dev/v1alpha1", Kind: "TopologyDisruptionBudget"},
			ObjectMeta: metav1.ObjectMeta{Name: "store-gateway",
				Labels: map[string]string{"team": "storage"}, Annotations: map[string]string{"owner": "storage"}},
			Spec: policyv1alpha1.TopologyDisruptionBudgetSpec{
				Selector:            policyv1alpha1.SetAsLabelSelector(map[string]string{"rollout-group": "store-gateway", "app.kubernetes.io/part-of": "mimir"}),
				Partition:           &policyv1alpha1.PartitionSource{PodNameRegex: `(.+)-[0-9]+`},
				MaxUnavailable:      ptrTo(intstr.FromInt32(1)),
				MaxDisruptedDomains: ptrTo(int32(1)),
			},
		}},
	}, {
		name: "several documents, empty ones skipped",
		input: "---\n# ingesters\n" + zpdbYAML("ingester-rollout", "  maxUnavailable: 2\n"+ingesterSelector) +
			"---\n---\n" + zpdbYAML("ingester-partitions", "  podNamePartitionRegex: ingester-zone-[a-z]-([0-9]+)\n"+ingesterSelector) + "---\n",
		want: []policyv1alpha1.TopologyDisruptionBudget{
			converted("ingester-rollout", zoneSpec(intstr.FromInt32(2))),
			converted("ingester-partitions", policyv1alpha1.TopologyDisruptionBudgetSpec{
				Selector:       ingesters,
				Partition:      &policyv1alpha1.PartitionSource{PodNameRegex: `ingester-zone-[a-z]-([0-9]+)`},
				MaxUnavailable: ptrTo(intstr.FromInt32(1)),
			}),
		},
	}, {
		name: "a List, as kubectl get -o yaml prints it",
		input: `apiVersion: v1
kind: List
metadata: {resourceVersion: ""}
items:
- apiVersion: rollout-operator.grafana.com/v1
  kind: ZoneAwarePodDisruptionBudget
  metadata: {name: a, namespace: mimir}
  spec: {maxUnavailable: 2, selector: {matchLabels: {rollout-group: ingester}}}
- apiVersion: rollout-operator.grafana.com/v1
  kind: ZoneAwarePodDisruptionBudget
  metadata: {name: b, namespace: mimir}
  spec: {maxUnavailable: 3, selector: {matchLabels: {rollout-group: ingester}}}
`,
		want: []policyv1alpha1.TopologyDisruptionBudget{
			converted("a", zoneSpec(intstr.FromInt32(2))),
			converted("b", zoneSpec(intstr.FromInt32(3))),
		},
	}, {
		name: "JSON",
		input: `{"apiVersion": "rollout-operator.grafana.com/v1", "kind": "ZoneAwarePodDisruptionBudget",
 "metadata": {"name": "ingester-rollout", "namespace": "mimir"},
 "spec": {"maxUnavailable": 2, "selector": {"matchLabels": {"rollout-group": "ingester"}}}}`,
		want: []policyv1alpha1.TopologyDisruptionBudget{converted("ingester-rollout", zoneSpec(intstr.FromInt32(2)))},
	}, {
		name:  "an unknown field",
		input: zpdbYAML("ingester-rollout", "  maxUnavaliable: 2\n"+ingesterSelector),
		errs:  []string{"error: document 1 (ZoneAwarePodDisruptionBudget mimir/ingester-rollout): spec.maxUnavaliable: unknown field"},
	}, {
		name:  "unknown fields at the top and in the selector, and a selector with expressions, all named",
		input: zpdbYAML("ingester-rollout", "  selector:\n    matchLabels: {a: b}\n    matchExpressions: [{key: c, operator: Exists}]\n    matchFields: {}\n") + "extra: 1\n",
		errs: []string{
			"document 1 (ZoneAwarePodDisruptionBudget mimir/ingester-rollout): extra: unknown field",
			"document 1 (ZoneAwarePodDisruptionBudget mimir/ingester-rollout): spec.selector.matchExpressions: unknown field: the peer's CRD has only matchLabels",
			"document 1 (ZoneAwarePodDisruptionBudget mimir/ingester-rollout): spec.selector.matchFields: unknown field",
		},
	}, {
		name:  "a delay longer than minReadySeconds takes",
		input: zpdbYAML("ingester-rollout", "  podNamePartitionRegex: ingester-zone-[a-z]-([0-9]+)\n  crossZoneEvictionDelay: 25h\n"+ingesterSelector),
		errs:  []string{"document 1 (ZoneAwarePodDisruptionBudget mimir/ingester-rollout): spec.crossZoneEvictionDelay: 25h is longer than minReadySeconds' maximum"},
	}, {
		name:  "a top-level alternation the peer anchors by halves",
		input: zpdbYAML("ingester-rollout", "  podNamePartitionRegex: ingester-([0-9]+)|querier-([0-9]+)\n  podNameRegexGroup: 1\n"+ingesterSelector),
		errs:  []string{"spec.podNamePartitionRegex: \"ingester-([0-9]+)|querier-([0-9]+)\" has a top-level '|'"},
	}, {
		name:  "label keys our API refuses",
		input: zpdbYAML("ingester-rollout", "  selector:\n    matchLabels: {\"bad key!\": x}\n"),
		errs:  []string{"document 1 (ZoneAwarePodDisruptionBudget mimir/ingester-rollout): parsing spec.selector:"},
	}, {
		name: "another kind, named; the good document is not printed either",
		input: zpdbYAML("ingester-rollout", ingesterSelector) + "---\n" +
			"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec: {maxUnavailable: 1}\n",
		errs: []string{`error: document 2: kind PodDisruptionBudget (apiVersion "policy/v1") is not a ZoneAwarePodDisruptionBudget`},
	}, {
		name:  "another kind inside a List",
		input: "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n",
		errs:  []string{`document 1, item 1: kind ConfigMap (apiVersion "v1") is not a ZoneAwarePodDisruptionBudget`},
	}, {
		name:  "another version of the peer's kind",
		input: strings.Replace(zpdbYAML("ingester-rollout", ingesterSelector), "/v1", "/v2", 1),
		errs:  []string{`document 1: apiVersion "rollout-operator.grafana.com/v2": only rollout-operator.grafana.com/v1 is known`},
	}, {
		name:  "malformed YAML",
		input: zpdbYAML("ingester-rollout", ingesterSelector) + "---\nspec: [unclosed\n",
		errs:  []string{"error: document 2: not valid YAML"},
	}, {
		name:  "a document that is not an object",
		input: "- a\n- b\n",
		errs:  []string{"error: document 1: not an object with apiVersion and kind"},
	}, {
		name:  "a value of the wrong type",
		input: zpdbYAML("ingester-rollout", "  maxUnavailable: \"1\"\n"+ingesterSelector),
		errs:  []string{`spec.maxUnavailable: must be an integer, not "1"`},
	}, {
		name:  "nothing to convert",
		input: "# empty\n",
		errs:  []string{"error: no ZoneAwarePodDisruptionBudget in the input"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runConvert(tc.input, "convert", "-f", "-")
			if len(tc.errs) > 0 {
				if code != ExitNo || stdout != "" {
					t.Fatalf("exit %d, stdout %q; want exit 1 and nothing printed", code, stdout)
				}
				for _, e := range tc.errs {
					if !strings.Contains(stderr, e) {
						t.Errorf("standard error lacks %q:\n%s", e, stderr)
					}
				}
				if n := strings.Count(stderr, "error: "); n != len(tc.errs) {
					t.Errorf("%d errors, want %d:\n%s", n, len(tc.errs), stderr)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if diff := cmp.Diff(tc.want, parsePrinted(t, stdout)); diff != "" {
				t.Errorf("printed budgets (-want +got):\n%s\n%s", diff, stdout)
			}
			for _, n := range tc.notes {
				if !strings.Contains(stderr, n) {
					t.Errorf("standard error lacks the note %q:\n%s", n, stderr)
				}
			}
			if len(tc.notes) == 0 && stderr != "" {
				t.Errorf("unexpected standard error:\n%s", stderr)
			}
		})
	}
}

// The examples of docs/partitions.md: testdata/convert/MODE.yaml prints
// MODE.tdb.yaml.
func TestConvertExamples(t *testing.T) {
	for _, mode := range []string{"zone", "partition"} {
		t.Run(mode, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", "convert", mode+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join("testdata", "convert", mode+".tdb.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := runConvert(string(in), "convert", "-f", "-")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if diff := cmp.Diff(string(want), stdout); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			parsePrinted(t, stdout)
		})
	}
}

// Each field the peer refuses, or our API cannot hold, is refused with its
// name; a valid budget converts.
func TestConvertZPDBFields(t *testing.T) {
	base := func(edit func(z *zoneAwarePDB)) *zoneAwarePDB {
		z := &zoneAwarePDB{meta: metav1.ObjectMeta{Name: "i", Namespace: "mimir"}, hasSelector: true, matchLabels: map[string]string{"a": "b"}}
		edit(z)
		return z
	}
	regex := func(r string) func(z *zoneAwarePDB) { return func(z *zoneAwarePDB) { z.podNamePartitionRegex = &r } }
	for _, tc := range []struct {
		name string
		zpdb *zoneAwarePDB
		// err is a substring of the error; "" for none.
		err string
	}{
		{"valid", base(func(*zoneAwarePDB) {}), ""},
		{"no name", base(func(z *zoneAwarePDB) { z.meta.Name = "" }), "metadata.name: required"},
		{"no selector", base(func(z *zoneAwarePDB) { z.hasSelector = false }), "spec.selector.matchLabels: required"},
		{"both amounts", base(func(z *zoneAwarePDB) {
			z.maxUnavailable, z.maxUnavailablePercentage = ptrTo(int64(1)), ptrTo(int64(10))
		}),
			"spec.maxUnavailablePercentage: set together with spec.maxUnavailable"},
		{"negative", base(func(z *zoneAwarePDB) { z.maxUnavailable = ptrTo(int64(-1)) }), "spec.maxUnavailable: -1 is not between 0 and"},
		{"over an int32", base(func(z *zoneAwarePDB) { z.maxUnavailable = ptrTo(int64(1 << 31)) }), "spec.maxUnavailable: 2147483648"},
		{"percentage over 100", base(func(z *zoneAwarePDB) { z.maxUnavailablePercentage = ptrTo(int64(101)) }), "spec.maxUnavailablePercentage: 101 is not between 0 and 100"},
		{"percentage with partitions", base(func(z *zoneAwarePDB) {
			regex("x-([0-9]+)")(z)
			z.maxUnavailablePercentage = ptrTo(int64(50))
		}), "spec.maxUnavailablePercentage: the peer refuses a percentage with spec.podNamePartitionRegex"},
		{"0% with partitions", base(func(z *zoneAwarePDB) {
			regex("x-([0-9]+)")(z)
			z.maxUnavailablePercentage = ptrTo(int64(0))
		}), ""},
		{"empty regex is zone mode", base(regex("")), ""},
		{"regex without a group", base(regex("x-[0-9]+")), "spec.podNamePartitionRegex: \"x-[0-9]+\" has no capture group"},
		{"regex that does not compile", base(regex("x-([0-9]+")), "spec.podNamePartitionRegex: does not compile"},
		{"regex too long for our API", base(regex("(x)" + strings.Repeat("y", 1024))), "is 1027 characters long; a TopologyDisruptionBudget takes at most 1024"},
		{"two groups, none chosen", base(regex("(x)-([0-9]+)")), "spec.podNameRegexGroup: required: \"(x)-([0-9]+)\" has 2 capture groups"},
		{"group out of range", base(func(z *zoneAwarePDB) { regex("(x)-([0-9]+)")(z); z.podNameRegexGroup = ptrTo(int64(3)) }),
			"spec.podNameRegexGroup: 3 is not a group"},
		{"group beyond our API's", base(func(z *zoneAwarePDB) {
			regex(strings.Repeat("(x)", 101))(z)
			z.podNameRegexGroup = ptrTo(int64(101))
		}), "spec.podNameRegexGroup: 101: a TopologyDisruptionBudget takes groups 1 to 100"},
		{"group without regex", base(func(z *zoneAwarePDB) { z.podNameRegexGroup = ptrTo(int64(1)) }), "spec.podNameRegexGroup: set without spec.podNamePartitionRegex"},
		{"delay without regex", base(func(z *zoneAwarePDB) { z.crossZoneEvictionDelay = ptrTo("20m") }), "spec.crossZoneEvictionDelay: the peer refuses it without spec.podNamePartitionRegex"},
		{"zero delay without regex", base(func(z *zoneAwarePDB) { z.crossZoneEvictionDelay = ptrTo("0s") }), ""},
		{"delay not a duration", base(func(z *zoneAwarePDB) { regex("x-([0-9]+)")(z); z.crossZoneEvictionDelay = ptrTo("1d") }),
			`spec.crossZoneEvictionDelay: "1d" is not a duration`},
		{"negative delay", base(func(z *zoneAwarePDB) { regex("x-([0-9]+)")(z); z.crossZoneEvictionDelay = ptrTo("-1m") }),
			"spec.crossZoneEvictionDelay: -1m is negative"},
		{"two fields at once", base(func(z *zoneAwarePDB) { z.meta.Name = ""; z.maxUnavailable = ptrTo(int64(-1)) }),
			"metadata.name: required: the TopologyDisruptionBudget takes the same name\nspec.maxUnavailable: -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tdb, _, err := convertZPDB(tc.zpdb)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.err == "":
				if err := budget.ParseCoverage(tdb).Err(); err != nil {
					t.Errorf("the budget engine refuses the result: %v", err)
				}
			case err == nil:
				t.Fatalf("converted, want an error with %q", tc.err)
			case !strings.Contains(err.Error(), tc.err):
				t.Errorf("error %q lacks %q", err, tc.err)
			}
		})
	}
}

// A sub-second delay waits at least as long, rounded up, and says so.
func TestConvertDelayRoundsUp(t *testing.T) {
	z := &zoneAwarePDB{meta: metav1.ObjectMeta{Name: "i"}, hasSelector: true,
		podNamePartitionRegex: ptrTo("x-([0-9]+)"), crossZoneEvictionDelay: ptrTo("1500ms")}
	tdb, notes, err := convertZPDB(z)
	if err != nil {
		t.Fatal(err)
	}
	if tdb.Spec.MinReadySeconds != 2 {
		t.Errorf("minReadySeconds %d, want 2", tdb.Spec.MinReadySeconds)
	}
	if diff := cmp.Diff([]string{"spec.crossZoneEvictionDelay 1500ms became minReadySeconds 2 (rounded up to whole seconds)"}, notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

// -f reads a file; a file that cannot be read, a missing -f and -o json
// are errors (exit 2).
func TestConvertInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zpdb.yaml")
	if err := os.WriteFile(path, []byte(zpdbYAML("ingester-rollout", ingesterSelector)), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runConvert("", "convert", "-f", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if diff := cmp.Diff([]policyv1alpha1.TopologyDisruptionBudget{converted("ingester-rollout", zoneSpec(intstr.FromInt32(1)))}, parsePrinted(t, stdout)); diff != "" {
		t.Errorf("printed budgets (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"convert", "-f", filepath.Join(t.TempDir(), "missing.yaml")}, "no such file"},
		{[]string{"convert"}, `required flag(s) "filename" not set`},
		{[]string{"convert", "-f", path, "-o", "json"}, "convert prints YAML only"},
	} {
		stdout, stderr, code := runConvert("", tc.args...)
		if code != ExitFailed || stdout != "" || !strings.Contains(stderr, tc.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, stdout, stderr, tc.err)
		}
	}
}

// The converted budgets decide as the peer's documentation says the
// ZoneAwarePodDisruptionBudget does, on its own examples: StatefulSets
// ingester-zone-{a,b,c}, the pods of each in their zone.
func TestConvertedBudgetsDecideAsThePeer(t *testing.T) {
	const zoneMode = ""
	const partitionMode = `  podNamePartitionRegex: '[a-z\-]+-zone-[a-z]-([0-9]+)'
`
	for _, tc := range []struct {
		name string
		// spec is the ZoneAwarePodDisruptionBudget's, besides its selector.
		spec string
		// replicas per StatefulSet; down are the pods not Ready.
		replicas int
		down     []string
		evict    string
		allowed  bool
	}{
		{"zone: nothing down", "  maxUnavailable: 1\n" + zoneMode, 2, nil, "ingester-zone-a-0", true},
		{"zone: the zone's maxUnavailable spent", "  maxUnavailable: 1\n" + zoneMode, 2, []string{"ingester-zone-a-1"}, "ingester-zone-a-0", false},
		{"zone: maxUnavailable 2 leaves one more", "  maxUnavailable: 2\n" + zoneMode, 2, []string{"ingester-zone-a-1"}, "ingester-zone-a-0", true},
		{"zone: another zone disrupted", "  maxUnavailable: 2\n" + zoneMode, 2, []string{"ingester-zone-b-0"}, "ingester-zone-a-0", false},
		{"partition: another partition down elsewhere", "  maxUnavailable: 1\n" + partitionMode, 2, []string{"ingester-zone-b-0"}, "ingester-zone-a-1", true},
		{"partition: the same partition down elsewhere", "  maxUnavailable: 1\n" + partitionMode, 2, []string{"ingester-zone-b-0"}, "ingester-zone-a-0", false},
		// floor(50% of 3) = 1 for the peer: one pod down spends the zone.
		{"percentage: rounded down", "  maxUnavailablePercentage: 50\n", 3, []string{"ingester-zone-a-2"}, "ingester-zone-a-0", false},
		{"percentage: nothing down", "  maxUnavailablePercentage: 50\n", 3, nil, "ingester-zone-a-0", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runConvert(zpdbYAML("ingester-rollout", tc.spec+ingesterSelector), "convert", "-f", "-")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			tdb := parsePrinted(t, stdout)[0]
			tdb.Generation = 1

			var nodes []corev1.Node
			var pods []*corev1.Pod
			owners := map[types.UID]budget.Owner{}
			for _, zone := range []string{"a", "b", "c"} {
				sts := "ingester-zone-" + zone
				owners[types.UID(sts)] = budget.Owner{UID: types.UID(sts), Kind: "StatefulSet", Name: sts, Replicas: int32(tc.replicas)}
				node := "node-" + zone
				nodes = append(nodes, *builders.Node(node).Zone("zone-" + zone).Obj())
				for i := range tc.replicas {
					name := fmt.Sprintf("%s-%d", sts, i)
					p := builders.Pod(name).Namespace("mimir").Label("rollout-group", "ingester").OnNode(node).Running().
						ControlledBy(metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts, UID: types.UID(sts)})
					if slices.Contains(tc.down, name) {
						p.NotReady()
					} else {
						p.Ready()
					}
					pods = append(pods, p.Obj())
				}
			}
			now := metav1.Now().Time
			res := budget.Compute(budget.Input{Budget: &tdb, Pods: pods, Nodes: func(n string) *corev1.Node {
				for i := range nodes {
					if nodes[i].Name == n {
						return &nodes[i]
					}
				}
				return nil
			}, Owners: owners, Now: now})
			tdb.Status = *budget.StatusFor(&tdb, &res, now, "")
			var pod *corev1.Pod
			for _, p := range pods {
				if p.Name == tc.evict {
					pod = p
				}
			}
			v := predict.NewSnapshot(nodes, []policyv1alpha1.TopologyDisruptionBudget{tdb}, nil, now).Decide(pod)
			if v.Allowed != tc.allowed {
				t.Errorf("eviction of %s allowed %v, want %v (%s); budget:\n%s", tc.evict, v.Allowed, tc.allowed, v.Reason, stdout)
			}
		})
	}
}
