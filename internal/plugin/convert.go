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
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp/syntax"
	"slices"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
)

// The peer's API: grafana/rollout-operator's ZoneAwarePodDisruptionBudget,
// as its CRD (operations/rollout-operator/crds) and its validating webhook
// define it.
const (
	zpdbAPIVersion = "rollout-operator.grafana.com/v1"
	zpdbKind       = "ZoneAwarePodDisruptionBudget"
	zpdbListKind   = "ZoneAwarePodDisruptionBudgetList"
)

// statefulSetOfPod reads a pod's StatefulSet from its name: a StatefulSet's
// pods are named <set>-<ordinal>, and the expression matches the whole name,
// so group 1 is everything before the last "-<digits>". The peer's zone is
// the StatefulSet; this makes it the budget's domain, and lets the operator
// place a missing pod in its StatefulSet by its name.
const statefulSetOfPod = `(.+)-[0-9]+`

// Bounds of our API that the peer's lacks (api/v1alpha1).
const (
	maxPodNameRegexLen   = 1024
	maxPodNameRegexGroup = 100
	maxMinReadySeconds   = 86400
)

// lastAppliedAnnotation is kubectl apply's record of the old object; it is
// not carried over.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// zoneAwarePDB is one ZoneAwarePodDisruptionBudget, its fields as the
// peer's CRD names them. A nil pointer is a field the manifest omits.
type zoneAwarePDB struct {
	meta metav1.ObjectMeta
	// matchLabels is spec.selector.matchLabels; hasSelector says whether
	// the manifest has spec.selector.matchLabels at all.
	hasSelector              bool
	matchLabels              map[string]string
	maxUnavailable           *int64
	maxUnavailablePercentage *int64
	podNamePartitionRegex    *string
	podNameRegexGroup        *int64
	crossZoneEvictionDelay   *string
}

// convertZPDB is the TopologyDisruptionBudget that decides evictions as
// the peer decides them for z, with notes on where the two may still
// differ. Every field of z is either carried or refused: the error names
// each field that cannot be expressed.
//
// Zone mode (no podNamePartitionRegex): the peer's zone is a StatefulSet,
// at most maxUnavailable of its pods may be unavailable, and no eviction is
// allowed while another zone has an unavailable pod: the domains are the
// StatefulSets (read from the pod names) and maxDisruptedDomains is 1.
// Partition mode: the domain is the partition read from the pod name, and
// any number of partitions may be disrupted at once.
func convertZPDB(z *zoneAwarePDB) (*policyv1alpha1.TopologyDisruptionBudget, []string, error) {
	c := &conversion{}
	tdb := &policyv1alpha1.TopologyDisruptionBudget{
		TypeMeta: metav1.TypeMeta{APIVersion: policyv1alpha1.GroupVersion.String(), Kind: "TopologyDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        z.meta.Name,
			Namespace:   z.meta.Namespace,
			Labels:      z.meta.Labels,
			Annotations: carriedAnnotations(z.meta.Annotations),
		},
	}
	if z.meta.Name == "" {
		c.refuse("metadata.name", "required: the TopologyDisruptionBudget takes the same name")
	}
	spec := &tdb.Spec

	if z.hasSelector {
		spec.Selector = policyv1alpha1.SetAsLabelSelector(z.matchLabels)
	} else {
		c.refuse("spec.selector.matchLabels", "required (the peer refuses a budget without it)")
	}

	partitioned := z.podNamePartitionRegex != nil && *z.podNamePartitionRegex != ""
	c.convertAmount(z, partitioned, spec)
	if partitioned {
		spec.Partition = c.convertPartitionRegex(*z.podNamePartitionRegex, z.podNameRegexGroup)
		spec.MinReadySeconds = c.convertDelay(z.crossZoneEvictionDelay)
	} else {
		if z.podNameRegexGroup != nil {
			c.refuse("spec.podNameRegexGroup", "set without spec.podNamePartitionRegex, where the peer ignores it; remove it")
		}
		if d := c.convertDelay(z.crossZoneEvictionDelay); d > 0 {
			c.refuse("spec.crossZoneEvictionDelay", "the peer refuses it without spec.podNamePartitionRegex")
		}
		spec.Partition = &policyv1alpha1.PartitionSource{PodNameRegex: statefulSetOfPod}
		spec.MaxDisruptedDomains = ptrTo(int32(1))
	}

	if len(c.errs) == 0 {
		// What the operator will make of it: a selector our API refuses
		// (keys and values that are not label keys and values) stops here.
		if err := budget.ParseCoverage(tdb).Err(); err != nil {
			c.errs = append(c.errs, err)
		}
	}
	if len(c.errs) > 0 {
		return nil, nil, errors.Join(c.errs...)
	}
	return tdb, c.notes, nil
}

// conversion collects what converting one budget found: the fields that
// cannot be carried, and notes on differences that remain.
type conversion struct {
	errs  []error
	notes []string
}

func (c *conversion) refuse(field, format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
}

// convertAmount is maxUnavailable or its percentage form.
func (c *conversion) convertAmount(z *zoneAwarePDB, partitioned bool, spec *policyv1alpha1.TopologyDisruptionBudgetSpec) {
	switch mu, pct := z.maxUnavailable, z.maxUnavailablePercentage; {
	case mu != nil && pct != nil:
		c.refuse("spec.maxUnavailablePercentage", "set together with spec.maxUnavailable; the peer refuses a budget with both")
	case pct != nil && (*pct < 0 || *pct > 100):
		c.refuse("spec.maxUnavailablePercentage", "%d is not between 0 and 100", *pct)
	case pct != nil && *pct > 0 && partitioned:
		c.refuse("spec.maxUnavailablePercentage", "the peer refuses a percentage with spec.podNamePartitionRegex")
	case pct != nil && *pct == 0:
		// The peer allows no eviction at 0%.
		spec.MaxUnavailable = ptrTo(intstr.FromInt32(0))
	case pct != nil:
		// The peer allows floor(N% of the StatefulSet's replicas), at least
		// 1. Our maxUnavailable percentage rounds up, which would allow more
		// than the peer; a minAvailable percentage keeps ceil((100-N)%),
		// which leaves exactly floor(N%) to go.
		spec.MinAvailable = ptrTo(intstr.FromString(fmt.Sprintf("%d%%", 100-*pct)))
		if fewest := (100 + *pct - 1) / *pct; fewest > 1 {
			c.notes = append(c.notes, fmt.Sprintf(
				"spec.maxUnavailablePercentage %d became minAvailable %d%%: the same count, %d%% of a StatefulSet's pods rounded down, except that a StatefulSet of fewer than %d pods allows 0 where the peer allows 1",
				*pct, 100-*pct, *pct, fewest))
		}
	case mu != nil && (*mu < 0 || *mu > maxInt32):
		c.refuse("spec.maxUnavailable", "%d is not between 0 and %d", *mu, maxInt32)
	case mu != nil:
		spec.MaxUnavailable = ptrTo(intstr.FromInt32(int32(*mu)))
	default:
		// The peer's default, carried: our API has none.
		spec.MaxUnavailable = ptrTo(intstr.FromInt32(1))
	}
}

const maxInt32 = 1<<31 - 1

// convertPartitionRegex is partition mode's source: the peer's expression
// and group, which it matches against the whole pod name as we do.
func (c *conversion) convertPartitionRegex(expr string, group *int64) *policyv1alpha1.PartitionSource {
	const field = "spec.podNamePartitionRegex"
	// The peer compiles "^" + expr + "$"; we compile ^(?:expr)$.
	peers, err := syntax.Parse("^"+expr+"$", syntax.Perl)
	if err != nil {
		c.refuse(field, "does not compile: %v", err)
		return nil
	}
	ours, err := syntax.Parse("^(?:"+expr+")$", syntax.Perl)
	if err != nil {
		c.refuse(field, "does not compile: %v", err)
		return nil
	}
	if peers.Simplify().String() != ours.Simplify().String() {
		// A top-level "|": the peer anchors only its first alternative at
		// the start and its last at the end.
		c.refuse(field, "%q has a top-level '|', which the peer anchors as ^%s$ (the first alternative at the start of the name, the last at its end), while a TopologyDisruptionBudget matches the whole name; group the alternatives, (?:...|...), if whole names are meant", expr, expr)
		return nil
	}
	if len(expr) > maxPodNameRegexLen {
		c.refuse(field, "is %d characters long; a TopologyDisruptionBudget takes at most %d", len(expr), maxPodNameRegexLen)
		return nil
	}
	groups := peers.MaxCap()
	p := &policyv1alpha1.PartitionSource{PodNameRegex: expr}
	switch {
	case groups == 0:
		c.refuse(field, "%q has no capture group; the peer refuses it", expr)
		return nil
	case group == nil && groups > 1:
		c.refuse("spec.podNameRegexGroup", "required: %q has %d capture groups, and the peer refuses it without one", expr, groups)
		return nil
	case group == nil:
		// The peer's default, 1, is ours.
	case *group < 1 || *group > int64(groups):
		c.refuse("spec.podNameRegexGroup", "%d is not a group of %q, which has %d", *group, expr, groups)
		return nil
	case *group > maxPodNameRegexGroup:
		c.refuse("spec.podNameRegexGroup", "%d: a TopologyDisruptionBudget takes groups 1 to %d", *group, maxPodNameRegexGroup)
		return nil
	default:
		p.PodNameRegexGroup = ptrTo(int32(*group))
	}
	return p
}

// convertDelay is crossZoneEvictionDelay as minReadySeconds: both count a
// replica that recovered as unavailable until it has been Ready that long.
func (c *conversion) convertDelay(delay *string) int32 {
	const field = "spec.crossZoneEvictionDelay"
	if delay == nil || *delay == "" {
		return 0
	}
	d, err := time.ParseDuration(*delay)
	switch {
	case err != nil:
		c.refuse(field, "%q is not a duration such as 20m or 1h", *delay)
		return 0
	case d < 0:
		c.refuse(field, "%s is negative; the peer refuses it", *delay)
		return 0
	case d > maxMinReadySeconds*time.Second:
		c.refuse(field, "%s is longer than minReadySeconds' maximum, %d s (24h)", *delay, maxMinReadySeconds)
		return 0
	}
	s := int32((d + time.Second - 1) / time.Second)
	if d%time.Second != 0 {
		c.notes = append(c.notes, fmt.Sprintf("%s %s became minReadySeconds %d (rounded up to whole seconds)", field, *delay, s))
	}
	return s
}

// carriedAnnotations are the annotations the new object keeps: all but
// kubectl's record of the old one.
func carriedAnnotations(in map[string]string) map[string]string {
	var out map[string]string
	for k, v := range in {
		if k == lastAppliedAnnotation {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }

// zpdbDocument is one ZoneAwarePodDisruptionBudget of the input and where
// it is, for messages: "document 2 (ZoneAwarePodDisruptionBudget
// mimir/ingester-rollout)".
type zpdbDocument struct {
	where string
	zpdb  *zoneAwarePDB
}

// readZPDBs reads the ZoneAwarePodDisruptionBudgets of a YAML (or JSON)
// stream: documents separated by "---", each a ZoneAwarePodDisruptionBudget
// or a List of them. Anything else, and any field the peer's CRD does not
// define, is an error naming the document and the field; every document is
// read, and all the errors returned.
func readZPDBs(r io.Reader) ([]zpdbDocument, []error) {
	var docs []zpdbDocument
	var errs []error
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	n := 0
	for {
		chunk, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("reading document %d: %w", n+1, err))
			break
		}
		raw, err := yaml.YAMLToJSONStrict(chunk)
		if err == nil && (len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null") {
			continue // empty, or comments only
		}
		n++
		where := fmt.Sprintf("document %d", n)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: not valid YAML: %w", where, err))
			continue
		}
		d, e := readObject(raw, where, true)
		docs = append(docs, d...)
		errs = append(errs, e...)
	}
	if n == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("no ZoneAwarePodDisruptionBudget in the input"))
	}
	return docs, errs
}

// readObject reads one object: a ZoneAwarePodDisruptionBudget, or, when
// lists is true, a List of them.
func readObject(raw []byte, where string, lists bool) ([]zpdbDocument, []error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, []error{fmt.Errorf("%s: not an object with apiVersion and kind", where)}
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return nil, []error{fmt.Errorf("%s: apiVersion and kind must be strings", where)}
	}
	switch {
	case tm.Kind == zpdbKind && tm.APIVersion == zpdbAPIVersion:
		where = fmt.Sprintf("%s (%s %s)", where, zpdbKind, nameOf(obj["metadata"]))
		z, errs := decodeZPDB(obj)
		if len(errs) > 0 {
			return nil, prefixed(where, errs)
		}
		return []zpdbDocument{{where: where, zpdb: z}}, nil
	case tm.Kind == zpdbKind:
		return nil, []error{fmt.Errorf("%s: apiVersion %q: only %s is known", where, tm.APIVersion, zpdbAPIVersion)}
	case lists && (tm.Kind == "List" && tm.APIVersion == "v1" || tm.Kind == zpdbListKind && tm.APIVersion == zpdbAPIVersion):
		return readList(obj, where)
	case tm.Kind == "":
		return nil, []error{fmt.Errorf("%s: kind: missing", where)}
	}
	return nil, []error{fmt.Errorf("%s: kind %s (apiVersion %q) is not a %s: remove it from the input", where, tm.Kind, tm.APIVersion, zpdbKind)}
}

// readList reads the items of a List, each named "document N, item M".
func readList(obj map[string]json.RawMessage, where string) ([]zpdbDocument, []error) {
	var errs []error
	for _, k := range unknownKeys(obj, "apiVersion", "kind", "metadata", "items") {
		errs = append(errs, fmt.Errorf("%s: %s: unknown field of a List", where, k))
	}
	var items []json.RawMessage
	if raw, ok := obj["items"]; ok {
		if err := json.Unmarshal(raw, &items); err != nil {
			errs = append(errs, fmt.Errorf("%s: items: not a list", where))
		}
	}
	var docs []zpdbDocument
	for i, item := range items {
		d, e := readObject(item, fmt.Sprintf("%s, item %d", where, i+1), false)
		docs = append(docs, d...)
		errs = append(errs, e...)
	}
	return docs, errs
}

// nameOf is "namespace/name" (or "name") of a metadata object, for
// messages; "" when it has none.
func nameOf(raw json.RawMessage) string {
	var m struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	}
	_ = json.Unmarshal(raw, &m) // a bad metadata is reported by decodeZPDB
	if m.Namespace != "" {
		return m.Namespace + "/" + m.Name
	}
	return m.Name
}

// decodeZPDB decodes an object strictly by the peer's CRD: each field it
// does not define is an error naming its path.
func decodeZPDB(obj map[string]json.RawMessage) (*zoneAwarePDB, []error) {
	var errs []error
	for _, k := range unknownKeys(obj, "apiVersion", "kind", "metadata", "spec", "status") {
		errs = append(errs, fmt.Errorf("%s: unknown field", k))
	}
	z := &zoneAwarePDB{}
	if raw, ok := obj["metadata"]; ok {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&z.meta); err != nil {
			errs = append(errs, fmt.Errorf("metadata: %w", err))
		}
	}
	// status is the peer's to write; the new object starts without one.
	var spec map[string]json.RawMessage
	if err := decodeField(obj["spec"], &spec); err != nil {
		return nil, append(errs, fmt.Errorf("spec: not an object"))
	}
	for _, k := range unknownKeys(spec, "maxUnavailable", "maxUnavailablePercentage", "selector",
		"podNamePartitionRegex", "podNameRegexGroup", "crossZoneEvictionDelay") {
		errs = append(errs, fmt.Errorf("spec.%s: unknown field (not in the peer's CRD)", k))
	}
	for _, f := range []struct {
		name string
		into any
		want string
	}{
		{"maxUnavailable", &z.maxUnavailable, "an integer"},
		{"maxUnavailablePercentage", &z.maxUnavailablePercentage, "an integer"},
		{"podNamePartitionRegex", &z.podNamePartitionRegex, "a string"},
		{"podNameRegexGroup", &z.podNameRegexGroup, "an integer"},
		{"crossZoneEvictionDelay", &z.crossZoneEvictionDelay, "a string"},
	} {
		if err := decodeField(spec[f.name], f.into); err != nil {
			errs = append(errs, fmt.Errorf("spec.%s: must be %s, not %s", f.name, f.want, spec[f.name]))
		}
	}
	var selector map[string]json.RawMessage
	if err := decodeField(spec["selector"], &selector); err != nil {
		errs = append(errs, fmt.Errorf("spec.selector: not an object"))
	}
	for _, k := range unknownKeys(selector, "matchLabels") {
		if k == "matchExpressions" {
			errs = append(errs, fmt.Errorf("spec.selector.matchExpressions: unknown field: the peer's CRD has only matchLabels, so the API server drops matchExpressions and the peer selects by matchLabels alone; remove it to convert what the peer enforces, or write the TopologyDisruptionBudget's selector by hand"))
			continue
		}
		errs = append(errs, fmt.Errorf("spec.selector.%s: unknown field (not in the peer's CRD)", k))
	}
	if raw, ok := selector["matchLabels"]; ok && !isNull(raw) {
		z.hasSelector = true
		if err := json.Unmarshal(raw, &z.matchLabels); err != nil {
			errs = append(errs, fmt.Errorf("spec.selector.matchLabels: must map strings to strings"))
		}
	}
	return z, errs
}

// decodeField decodes a field that may be absent or null (absent either
// way, as the API server takes it).
func decodeField(raw json.RawMessage, into any) error {
	if raw == nil || isNull(raw) {
		return nil
	}
	return json.Unmarshal(raw, into)
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// unknownKeys are the keys of obj not among known, sorted.
func unknownKeys(obj map[string]json.RawMessage, known ...string) []string {
	var out []string
	for k := range obj {
		if !slices.Contains(known, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func prefixed(where string, errs []error) []error {
	out := make([]error, 0, len(errs))
	for _, err := range errs {
		out = append(out, fmt.Errorf("%s: %w", where, err))
	}
	return out
}

// budgetManifest is a TopologyDisruptionBudget as kubectl apply takes it:
// no status, and only the metadata a user sets.
type budgetManifest struct {
	APIVersion string                                      `json:"apiVersion"`
	Kind       string                                      `json:"kind"`
	Metadata   manifestMetadata                            `json:"metadata"`
	Spec       policyv1alpha1.TopologyDisruptionBudgetSpec `json:"spec"`
}

type manifestMetadata struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// convertStream converts every ZoneAwarePodDisruptionBudget of r into the
// YAML of its TopologyDisruptionBudget, documents separated by "---". It
// converts all or nothing: with any error the output is empty and every
// error is returned, each naming its document and field.
func convertStream(r io.Reader) (out []byte, notes []string, errs []error) {
	docs, errs := readZPDBs(r)
	var buf bytes.Buffer
	for _, d := range docs {
		tdb, n, err := convertZPDB(d.zpdb)
		if err != nil {
			for _, e := range flatten(err) {
				errs = append(errs, fmt.Errorf("%s: %w", d.where, e))
			}
			continue
		}
		for _, note := range n {
			notes = append(notes, fmt.Sprintf("%s: %s", d.where, note))
		}
		b, err := yaml.Marshal(budgetManifest{
			APIVersion: tdb.APIVersion,
			Kind:       tdb.Kind,
			Metadata:   manifestMetadata{Name: tdb.Name, Namespace: tdb.Namespace, Labels: tdb.Labels, Annotations: tdb.Annotations},
			Spec:       tdb.Spec,
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: printing: %w", d.where, err))
			continue
		}
		if buf.Len() > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	if len(errs) > 0 {
		return nil, nil, errs
	}
	return buf.Bytes(), notes, nil
}

// flatten lists the errors errors.Join joined.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func newConvertCommand(o *options) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "convert -f FILE",
		Short: "Print the TopologyDisruptionBudgets equivalent to grafana/rollout-operator's ZoneAwarePodDisruptionBudgets.",
		Long: `Reads ZoneAwarePodDisruptionBudget manifests (rollout-operator.grafana.com/v1;
several YAML documents, or a List) and prints the equivalent
TopologyDisruptionBudgets (policy.tdb.dev/v1alpha1), same name and namespace,
ready for kubectl apply -f -. It reads nothing from the cluster.

A field that cannot be expressed, a field the peer's CRD does not define, or
another kind in the input is an error naming the document and the field; then
nothing is printed. Notes on remaining differences go to standard error.

Exit status: 0 converted, 1 some document cannot be converted (named), 2 the
input cannot be read.`,
		Example: `  kubectl tdb convert -f zpdb.yaml | kubectl apply -f -
  kubectl get zpdb -A -o yaml | kubectl tdb convert -f -`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			if o.out == "json" {
				return &ExitError{Code: ExitFailed, Err: fmt.Errorf("convert prints YAML only: drop -o json")}
			}
			if err := o.checkOutput(); err != nil {
				return err
			}
			in := o.stdin
			if file != "-" {
				f, err := os.Open(file)
				if err != nil {
					return &ExitError{Code: ExitFailed, Err: err}
				}
				defer func() { _ = f.Close() }()
				in = f
			}
			out, notes, errs := convertStream(in)
			for _, err := range errs {
				_, _ = fmt.Fprintf(o.stderr, "error: %v\n", err)
			}
			if len(errs) > 0 {
				return answeredNo
			}
			for _, n := range notes {
				_, _ = fmt.Fprintf(o.stderr, "note: %s\n", n)
			}
			_, err := o.stdout.Write(out)
			return err
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", `The file of ZoneAwarePodDisruptionBudgets ("-": standard input).`)
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}
