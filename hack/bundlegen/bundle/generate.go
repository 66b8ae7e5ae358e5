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

// Package bundle renders tdb-operator's OLM bundle (registry+v1) from the
// kustomize rendering of config/default, and checks a bundle against the
// rules OLM documents. operator-sdk is not available to this project, so
// both halves are written here, from OLM's published formats.
package bundle

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Where the bundle's files go, relative to the output root.
const (
	ManifestsDir    = "bundle/manifests"
	MetadataDir     = "bundle/metadata"
	ScorecardDir    = "bundle/tests/scorecard"
	VersionFile     = "bundle/VERSION"
	AnnotationsFile = "bundle/metadata/annotations.yaml"
	ScorecardFile   = "bundle/tests/scorecard/config.yaml"
	DockerfileFile  = "bundle.Dockerfile"
)

// CSVFile is the ClusterServiceVersion's path.
const CSVFile = ManifestsDir + "/" + PackageName + ".clusterserviceversion.yaml"

// What the bundle changes in the manager's Deployment, because OLM, not the
// operator, provides the webhook's certificate: OLM mounts its key pair at
// OLMCertDir (the volume OLMCertVolume) and injects its CA into the webhook
// configuration it creates, so the operator must neither rotate a
// certificate nor own a volume at that path.
const (
	OLMCertDir       = "/tmp/k8s-webhook-server/serving-certs"
	OLMCertVolume    = "webhook-cert"
	OLMAPICertVolume = "apiservice-cert"
	certRotationFlag = "--cert-rotation"
	certDirFlag      = "--webhook-cert-dir"
	// webhookConfigFlag names the webhook configuration the operator reads
	// for the webhook's scope (and, with the rotation, injects the CA into).
	webhookConfigFlag = "--webhook-config-name"
)

// rotationOnlyFlags only mean something with --cert-rotation, and name
// objects a bundle install does not have.
var rotationOnlyFlags = []string{"--webhook-secret-name", "--webhook-service-name", "--webhook-config-name"}

// RotationOnlyResources are the resources (group/resource) the operator's
// RBAC names only for its certificate rotation (internal/certs): the Secret
// holding the certificate and the webhook configuration that receives its
// CA. The bundle turns the rotation off, so its permissions leave out the
// rules on them: under OLM the install namespace may be shared (an
// AllNamespaces install usually goes to a namespace such as `operators`),
// and get/list/watch on its Secrets would read other operators' secrets.
var RotationOnlyResources = []string{"/secrets", "admissionregistration.k8s.io/validatingwebhookconfigurations"}

// The label config/ sets on every object to say kustomize manages it; in
// the bundle, OLM does.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByOLM   = "olm"
)

// SemVer is a semantic version 2.0.0 without a leading "v".
var SemVer = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

// SourceFile is a file the bundle copies or reads, by base name.
type SourceFile struct {
	Name string
	Data []byte
}

// Input is everything a bundle is made of.
type Input struct {
	// Version is the operator's version, x.y.z.
	Version string
	// Replaces is the CSV this version upgrades, if any (spec.replaces).
	Replaces string
	// Image is the manager image.
	Image string
	// Rendered is `kustomize build config/default`.
	Rendered []byte
	// CRDs are the files of config/crd/bases, copied into the bundle
	// unchanged.
	CRDs []SourceFile
	// Samples are the files of config/samples; custom resources of the
	// owned CRDs become alm-examples.
	Samples []SourceFile
	// ScorecardImage runs the scorecard's built-in tests.
	ScorecardImage string
}

// File is a generated file, its path relative to the output root.
type File struct {
	Path string
	Data []byte
}

// config is the rendered config/default sorted by what the bundle does with
// each object.
type config struct {
	crds            []Object
	deployments     []Object
	serviceAccounts map[string]bool
	clusterRoles    map[string]Object
	roles           map[string]Object // by namespace/name
	clusterBindings []Object
	roleBindings    []Object
	services        []Object
	webhookConfigs  []Object
	extras          []Object // shipped in bundle/manifests as they are
}

// Generate renders the bundle. The output depends on the input only: a
// second run gives the same bytes.
func Generate(in Input) ([]File, error) {
	if !SemVer.MatchString(in.Version) {
		return nil, fmt.Errorf("version %q is not a semantic version x.y.z", in.Version)
	}
	if in.Image == "" {
		return nil, fmt.Errorf("no manager image")
	}
	if in.ScorecardImage == "" {
		return nil, fmt.Errorf("no scorecard test image")
	}
	objs, err := ParseObjects(in.Rendered)
	if err != nil {
		return nil, fmt.Errorf("parsing the rendered config: %w", err)
	}
	cfg, err := sortConfig(objs)
	if err != nil {
		return nil, err
	}

	var files []File
	crdFiles, owned, kinds, err := ownedCRDs(cfg.crds, in.CRDs)
	if err != nil {
		return nil, err
	}
	files = append(files, crdFiles...)

	strategy, err := installStrategy(cfg, in.Image)
	if err != nil {
		return nil, err
	}
	webhooks, webhookServices, err := webhookDefinitions(cfg)
	if err != nil {
		return nil, err
	}
	// OLM puts its own Service in front of a webhook's Deployment; other
	// Services ship as they are.
	for _, o := range cfg.services {
		if !webhookServices[o.Namespace+"/"+o.Name] {
			cfg.extras = append(cfg.extras, o)
		}
	}
	examples, err := almExamples(in.Samples, kinds)
	if err != nil {
		return nil, err
	}

	csv := ClusterServiceVersion{
		APIVersion: CSVAPIVersion,
		Kind:       CSVKind,
		Metadata: ObjectMeta{
			Name: PackageName + ".v" + in.Version,
			Annotations: map[string]string{
				"alm-examples":   examples,
				"capabilities":   Capabilities,
				"categories":     Categories,
				"containerImage": in.Image,
				"description":    ShortDescription,
				"repository":     Repository,
				// The namespace the kustomize install uses; OLM's console
				// offers it when installing.
				"operatorframework.io/suggested-namespace": cfg.namespace(),
			},
		},
		Spec: CSVSpec{
			CustomResourceDefinitions: CustomResourceDefinitions{Owned: owned},
			Description:               description,
			DisplayName:               DisplayName,
			Icon:                      []Icon{{Data: base64.StdEncoding.EncodeToString(icon), MediaType: "image/svg+xml"}},
			Install:                   strategy,
			InstallModes: []InstallMode{
				// Budgets live in the workloads' namespaces and evictions
				// happen in all of them: the operator watches every namespace.
				{Type: InstallModeOwnNamespace, Supported: false},
				{Type: InstallModeSingleNamespace, Supported: false},
				{Type: InstallModeMultiNamespace, Supported: false},
				{Type: InstallModeAllNamespaces, Supported: true},
			},
			Keywords:           keywords,
			Links:              links,
			Maintainers:        maintainers,
			Maturity:           Maturity,
			MinKubeVersion:     MinKubeVersion,
			Provider:           AppLink{Name: Provider, URL: Repository},
			Replaces:           in.Replaces,
			Version:            in.Version,
			WebhookDefinitions: webhooks,
		},
	}
	csvYAML, err := toYAML(csv)
	if err != nil {
		return nil, fmt.Errorf("rendering the CSV: %w", err)
	}
	files = append(files, File{Path: CSVFile, Data: csvYAML})

	for _, o := range cfg.extras {
		f, err := extraManifest(o)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}

	annotations := DefaultAnnotations()
	annYAML, err := toYAML(Annotations{Annotations: annotations})
	if err != nil {
		return nil, err
	}
	scYAML, err := toYAML(scorecardConfig(in.ScorecardImage))
	if err != nil {
		return nil, err
	}
	files = append(files,
		File{Path: AnnotationsFile, Data: annYAML},
		File{Path: ScorecardFile, Data: scYAML},
		File{Path: VersionFile, Data: []byte(in.Version + "\n")},
		File{Path: DockerfileFile, Data: bundleDockerfile(annotations)},
	)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	for i := 1; i < len(files); i++ {
		if files[i].Path == files[i-1].Path {
			return nil, fmt.Errorf("two bundle files would be written to %s", files[i].Path)
		}
	}
	return files, nil
}

// sortConfig sorts the rendered objects by what the bundle does with them,
// and refuses kinds it has no rule for, so a new kind in config/ cannot be
// dropped from the bundle silently.
func sortConfig(objs []Object) (config, error) {
	cfg := config{
		serviceAccounts: map[string]bool{},
		clusterRoles:    map[string]Object{},
		roles:           map[string]Object{},
	}
	for _, o := range objs {
		switch o.Kind {
		case "Namespace":
			// OLM installs into the namespace of the OperatorGroup.
		case "CustomResourceDefinition":
			cfg.crds = append(cfg.crds, o)
		case "Deployment":
			cfg.deployments = append(cfg.deployments, o)
		case "ServiceAccount":
			// OLM creates the service accounts the permissions name.
			cfg.serviceAccounts[o.Name] = true
		case "ClusterRole":
			cfg.clusterRoles[o.Name] = o
		case "Role":
			cfg.roles[o.Namespace+"/"+o.Name] = o
		case "ClusterRoleBinding":
			cfg.clusterBindings = append(cfg.clusterBindings, o)
		case "RoleBinding":
			cfg.roleBindings = append(cfg.roleBindings, o)
		case "Service":
			cfg.services = append(cfg.services, o)
		case "ValidatingWebhookConfiguration":
			cfg.webhookConfigs = append(cfg.webhookConfigs, o)
		case "Secret":
			// The only Secret config/ ships is the webhook certificate's,
			// filled by the operator's rotation, which the bundle turns
			// off: OLM issues the certificate. Anything else would be a
			// Secret with content, which has no place in a bundle.
			var s corev1.Secret
			if err := decodeStrict(o.JSON, &s); err != nil {
				return cfg, fmt.Errorf("%s: %w", o.ID(), err)
			}
			if len(s.Data)+len(s.StringData) > 0 {
				return cfg, fmt.Errorf("%s has data: a bundle must not carry secrets", o.ID())
			}
		case "PodDisruptionBudget", "ConfigMap":
			cfg.extras = append(cfg.extras, o)
		case "NetworkPolicy":
			// Not shipped. OLM accepts NetworkPolicy in a bundle only since
			// operator-registry v1.55.0 (2025); older OLM refuses the whole
			// bundle. And its rules are the cluster's own (who may call the
			// webhook: the API server's addresses), which a bundle cannot
			// know. docs/install.md tells OLM users to apply one.
		default:
			return cfg, fmt.Errorf("%s: hack/bundlegen has no rule for kind %s; decide whether the bundle ships it (and whether OLM supports it) before adding it to config/default", o.ID(), o.Kind)
		}
	}
	if len(cfg.deployments) == 0 {
		return cfg, fmt.Errorf("the rendered config has no Deployment")
	}
	if len(cfg.crds) == 0 {
		return cfg, fmt.Errorf("the rendered config has no CustomResourceDefinition")
	}
	return cfg, nil
}

// namespace is the namespace config/default installs into.
func (cfg config) namespace() string {
	return cfg.deployments[0].Namespace
}

// ownedCRDs copies each rendered CRD's source file from config/crd/bases
// byte for byte, and describes each served version for OLM.
func ownedCRDs(rendered []Object, sources []SourceFile) ([]File, []CRDDescription, map[string]bool, error) {
	byName := map[string]SourceFile{}
	parsed := map[string]apiextensionsv1.CustomResourceDefinition{}
	for _, src := range sources {
		objs, err := ParseObjects(src.Data)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", src.Name, err)
		}
		if len(objs) != 1 || objs[0].Kind != "CustomResourceDefinition" {
			return nil, nil, nil, fmt.Errorf("%s: want exactly one CustomResourceDefinition", src.Name)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := decodeStrict(objs[0].JSON, &crd); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", src.Name, err)
		}
		byName[crd.Name] = src
		parsed[crd.Name] = crd
	}
	var (
		files []File
		owned []CRDDescription
		kinds = map[string]bool{}
	)
	for _, o := range rendered {
		src, ok := byName[o.Name]
		if !ok {
			return nil, nil, nil, fmt.Errorf("the rendered config has CRD %s, which is not in config/crd/bases", o.Name)
		}
		files = append(files, File{Path: ManifestsDir + "/" + path.Base(src.Name), Data: src.Data})
		crd := parsed[o.Name]
		pres, ok := presentations[crd.Name]
		if !ok {
			return nil, nil, nil, fmt.Errorf("CRD %s has no display name, description or descriptors in hack/bundlegen/bundle/metadata.go", crd.Name)
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			kinds[crd.Spec.Group+"/"+v.Name+"/"+crd.Spec.Names.Kind] = true
			d := CRDDescription{
				Name:        crd.Name,
				Version:     v.Name,
				Kind:        crd.Spec.Names.Kind,
				DisplayName: pres.displayName,
				Description: pres.description,
				Resources:   pres.resources,
			}
			var schema *apiextensionsv1.JSONSchemaProps
			if v.Schema != nil {
				schema = v.Schema.OpenAPIV3Schema
			}
			var err error
			if d.SpecDescriptors, err = descriptors(schema, "spec", pres.spec); err != nil {
				return nil, nil, nil, fmt.Errorf("CRD %s %s: %w", crd.Name, v.Name, err)
			}
			if d.StatusDescriptors, err = descriptors(schema, "status", pres.status); err != nil {
				return nil, nil, nil, fmt.Errorf("CRD %s %s: %w", crd.Name, v.Name, err)
			}
			owned = append(owned, d)
		}
	}
	return files, owned, kinds, nil
}

// descriptors builds descriptors whose descriptions are the schema's.
func descriptors(schema *apiextensionsv1.JSONSchemaProps, root string, specs []descriptorSpec) ([]Descriptor, error) {
	var out []Descriptor
	for _, s := range specs {
		field := SchemaField(schema, root+"."+s.path)
		if field == nil {
			return nil, fmt.Errorf("descriptor %s.%s: no such field in the schema", root, s.path)
		}
		out = append(out, Descriptor{
			Path:         s.path,
			DisplayName:  s.displayName,
			Description:  strings.Join(strings.Fields(field.Description), " "),
			XDescriptors: s.xDescriptors,
		})
	}
	return out, nil
}

// SchemaField finds a dotted path in an OpenAPI schema, or returns nil.
func SchemaField(schema *apiextensionsv1.JSONSchemaProps, dotted string) *apiextensionsv1.JSONSchemaProps {
	cur := schema
	for _, name := range strings.Split(dotted, ".") {
		if cur == nil {
			return nil
		}
		next, ok := cur.Properties[name]
		if !ok {
			return nil
		}
		cur = &next
	}
	return cur
}

// installStrategy is spec.install: the Deployments as config renders them
// (adjusted for OLM by ForOLM) and the RBAC bound to their service accounts.
func installStrategy(cfg config, image string) (NamedInstallStrategy, error) {
	var (
		details StrategyDetailsDeployment
		seenSA  = map[string]bool{}
	)
	for _, d := range cfg.deployments {
		spec, ok := d.Fields["spec"].(map[string]any)
		if !ok {
			return details.named(), fmt.Errorf("%s has no spec", d.ID())
		}
		patched, err := ForOLM(spec, image)
		if err != nil {
			return details.named(), fmt.Errorf("%s: %w", d.ID(), err)
		}
		raw, err := json.Marshal(patched)
		if err != nil {
			return details.named(), err
		}
		var typed appsv1.Deployment
		if err := decodeStrict(d.JSON, &typed); err != nil {
			return details.named(), fmt.Errorf("%s: %w", d.ID(), err)
		}
		details.DeploymentSpecs = append(details.DeploymentSpecs, StrategyDeploymentSpec{
			Name:  d.Name,
			Label: managedByOLM(typed.Labels),
			Spec:  raw,
		})

		sa := typed.Spec.Template.Spec.ServiceAccountName
		if sa == "" {
			return details.named(), fmt.Errorf("%s runs as the default service account; give it its own", d.ID())
		}
		if !cfg.serviceAccounts[sa] {
			return details.named(), fmt.Errorf("%s runs as service account %s, which config/default does not create", d.ID(), sa)
		}
		if seenSA[sa] {
			continue
		}
		seenSA[sa] = true
		clusterRules, nsRules, err := boundRules(cfg, sa, d.Namespace)
		if err != nil {
			return details.named(), err
		}
		if clusterRules, err = withoutRotationRules(clusterRules); err != nil {
			return details.named(), fmt.Errorf("the ClusterRoles bound to %s: %w", sa, err)
		}
		if nsRules, err = withoutRotationRules(nsRules); err != nil {
			return details.named(), fmt.Errorf("the Roles bound to %s: %w", sa, err)
		}
		if len(clusterRules) > 0 {
			details.ClusterPermissions = append(details.ClusterPermissions, StrategyDeploymentPermissions{ServiceAccountName: sa, Rules: clusterRules})
		}
		if len(nsRules) > 0 {
			details.Permissions = append(details.Permissions, StrategyDeploymentPermissions{ServiceAccountName: sa, Rules: nsRules})
		}
	}
	if err := unboundRBAC(cfg, seenSA); err != nil {
		return details.named(), err
	}
	return details.named(), nil
}

func (d StrategyDetailsDeployment) named() NamedInstallStrategy {
	return NamedInstallStrategy{StrategyName: InstallStrategyDeployment, StrategySpec: d}
}

// BoundRules returns the rules the rendered RBAC grants service account sa
// of namespace ns: cluster-wide through ClusterRoleBindings, and in its own
// namespace through RoleBindings (OLM grants the latter in the namespace it
// installs into). Rules keep the bindings' order.
func boundRules(cfg config, sa, ns string) (cluster, namespaced []rbacv1.PolicyRule, err error) {
	bindsSA := func(subjects []rbacv1.Subject) bool {
		for _, s := range subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Name == sa && s.Namespace == ns {
				return true
			}
		}
		return false
	}
	for _, b := range cfg.clusterBindings {
		var crb rbacv1.ClusterRoleBinding
		if err := decodeStrict(b.JSON, &crb); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", b.ID(), err)
		}
		if !bindsSA(crb.Subjects) {
			continue
		}
		role, ok := cfg.clusterRoles[crb.RoleRef.Name]
		if crb.RoleRef.Kind != "ClusterRole" || !ok {
			return nil, nil, fmt.Errorf("%s binds %s %s, which config/default does not create", b.ID(), crb.RoleRef.Kind, crb.RoleRef.Name)
		}
		rules, err := roleRules(role)
		if err != nil {
			return nil, nil, err
		}
		cluster = append(cluster, rules...)
	}
	for _, b := range cfg.roleBindings {
		var rb rbacv1.RoleBinding
		if err := decodeStrict(b.JSON, &rb); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", b.ID(), err)
		}
		if !bindsSA(rb.Subjects) {
			continue
		}
		if rb.Namespace != ns {
			return nil, nil, fmt.Errorf("%s grants %s rights in namespace %s; a bundle can grant namespaced rights only in the operator's own namespace", b.ID(), sa, rb.Namespace)
		}
		var role Object
		var ok bool
		switch rb.RoleRef.Kind {
		case "Role":
			role, ok = cfg.roles[rb.Namespace+"/"+rb.RoleRef.Name]
		case "ClusterRole":
			role, ok = cfg.clusterRoles[rb.RoleRef.Name]
		}
		if !ok {
			return nil, nil, fmt.Errorf("%s binds %s %s, which config/default does not create", b.ID(), rb.RoleRef.Kind, rb.RoleRef.Name)
		}
		rules, err := roleRules(role)
		if err != nil {
			return nil, nil, err
		}
		namespaced = append(namespaced, rules...)
	}
	return cluster, namespaced, nil
}

// withoutRotationRules drops the rules that only the certificate rotation
// needs: those on RotationOnlyResources alone. A rule that grants one of
// them together with anything else, or through a wildcard, is refused: the
// bundle could neither keep it (it would grant what the rotation needs) nor
// drop it (it would take away what the operator needs); split it in config/.
func withoutRotationRules(rules []rbacv1.PolicyRule) ([]rbacv1.PolicyRule, error) {
	var kept []rbacv1.PolicyRule
	for i, r := range rules {
		if len(r.Resources) == 0 {
			kept = append(kept, r) // non-resource URLs
			continue
		}
		rotationOnly, other := 0, 0
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				switch {
				case contains(RotationOnlyResources, g+"/"+resourceBase(res)):
					rotationOnly++
				case coversRotationResource(g, res):
					return nil, fmt.Errorf("rule %d (%v on %v in API groups %q) grants the certificate rotation's %v through a wildcard; name the resources", i, r.Verbs, r.Resources, r.APIGroups, RotationOnlyResources)
				default:
					other++
				}
			}
		}
		switch {
		case rotationOnly == 0:
			kept = append(kept, r)
		case other > 0:
			return nil, fmt.Errorf("rule %d (%v on %v in API groups %q) mixes resources only the certificate rotation needs (%v) with others; split it", i, r.Verbs, r.Resources, r.APIGroups, RotationOnlyResources)
		}
	}
	return kept, nil
}

// resourceBase is a resource without its subresource.
func resourceBase(res string) string {
	base, _, _ := strings.Cut(res, "/")
	return base
}

// coversRotationResource says whether the resource res of API group g,
// wildcards included, grants one of RotationOnlyResources.
func coversRotationResource(g, res string) bool {
	if res != "*" {
		return false // "*/scale" and the like are subresources no rotation resource has
	}
	for _, gr := range RotationOnlyResources {
		group, _, _ := strings.Cut(gr, "/")
		if g == "*" || g == group {
			return true
		}
	}
	return false
}

// managedByOLM returns labels with ManagedByLabel, if set, saying OLM.
func managedByOLM(labels map[string]string) map[string]string {
	if _, ok := labels[ManagedByLabel]; !ok {
		return labels
	}
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		out[k] = v
	}
	out[ManagedByLabel] = ManagedByOLM
	return out
}

// relabelForOLM sets ManagedByLabel in a generic object's metadata, where
// it is set, to OLM, and refuses a spec.selector that selects on it: the
// selector would miss the relabeled pods.
func relabelForOLM(obj map[string]any) error {
	if labels, ok := dig(obj, "metadata", "labels"); ok {
		if _, ok := labels[ManagedByLabel]; ok {
			labels[ManagedByLabel] = ManagedByOLM
		}
	}
	sel, ok := dig(obj, "spec", "selector")
	if !ok {
		return nil
	}
	matchLabels, _ := sel["matchLabels"].(map[string]any)
	_, byLabel := matchLabels[ManagedByLabel]
	exprs, _ := sel["matchExpressions"].([]any)
	for _, e := range exprs {
		if em, ok := e.(map[string]any); ok && em["key"] == ManagedByLabel {
			byLabel = true
		}
	}
	if byLabel {
		return fmt.Errorf("spec.selector selects on %s, which the bundle sets to %q", ManagedByLabel, ManagedByOLM)
	}
	return nil
}

func roleRules(o Object) ([]rbacv1.PolicyRule, error) {
	var role struct {
		Rules           []rbacv1.PolicyRule     `json:"rules"`
		AggregationRule *rbacv1.AggregationRule `json:"aggregationRule"`
	}
	if err := json.Unmarshal(o.JSON, &role); err != nil {
		return nil, fmt.Errorf("%s: %w", o.ID(), err)
	}
	if role.AggregationRule != nil {
		return nil, fmt.Errorf("%s aggregates other roles; OLM permissions need the rules spelled out", o.ID())
	}
	return role.Rules, nil
}

// unboundRBAC refuses roles and bindings that do not serve the Deployments'
// service accounts: the bundle would drop them, and whoever added them to
// config/ meant them to exist.
func unboundRBAC(cfg config, boundSAs map[string]bool) error {
	used := map[string]bool{}
	check := func(binding Object, refNamespace string, subjects []rbacv1.Subject, ref rbacv1.RoleRef) error {
		for _, s := range subjects {
			if s.Kind == rbacv1.ServiceAccountKind && boundSAs[s.Name] {
				used[ref.Kind+"/"+refNamespace+"/"+ref.Name] = true
				return nil
			}
		}
		return fmt.Errorf("%s binds no service account of the operator's Deployments; hack/bundlegen has no rule for it", binding.ID())
	}
	for _, b := range cfg.clusterBindings {
		var crb rbacv1.ClusterRoleBinding
		if err := json.Unmarshal(b.JSON, &crb); err != nil {
			return err
		}
		if err := check(b, "", crb.Subjects, crb.RoleRef); err != nil {
			return err
		}
	}
	for _, b := range cfg.roleBindings {
		var rb rbacv1.RoleBinding
		if err := json.Unmarshal(b.JSON, &rb); err != nil {
			return err
		}
		ns := rb.Namespace
		if rb.RoleRef.Kind == "ClusterRole" {
			ns = ""
		}
		if err := check(b, ns, rb.Subjects, rb.RoleRef); err != nil {
			return err
		}
	}
	for name := range cfg.clusterRoles {
		if !used["ClusterRole//"+name] {
			return fmt.Errorf("ClusterRole %s is bound to none of the operator's service accounts; hack/bundlegen has no rule for it", name)
		}
	}
	for key, r := range cfg.roles {
		if !used["Role/"+key] {
			return fmt.Errorf("%s is bound to none of the operator's service accounts; hack/bundlegen has no rule for it", r.ID())
		}
	}
	return nil
}

// ForOLM adjusts a manager Deployment spec, as config/ renders it, for an
// OLM install: the manager container runs image; the operator's own
// certificate rotation is off (--cert-rotation=false, its Secret, Service
// and webhook configuration names dropped) and the webhook server reads the
// certificate OLM mounts at OLMCertDir; the volume config/ mounts there is
// removed, since OLM mounts its own; the pods' ManagedByLabel, if any, says
// OLM. Everything else is left as it is. (The RBAC the rotation needs is
// dropped by withoutRotationRules, the Deployment's own labels by
// managedByOLM.)
func ForOLM(spec map[string]any, image string) (map[string]any, error) {
	out, err := deepCopyJSON(spec)
	if err != nil {
		return nil, err
	}
	// The Deployment's selector, and the pod template's labels.
	if err := relabelForOLM(map[string]any{"spec": out}); err != nil {
		return nil, err
	}
	if template, ok := out["template"].(map[string]any); ok {
		if err := relabelForOLM(template); err != nil {
			return nil, err
		}
	}
	podSpec, ok := dig(out, "template", "spec")
	if !ok {
		return nil, fmt.Errorf("no spec.template.spec")
	}
	containers, _ := podSpec["containers"].([]any)
	var manager map[string]any
	for _, c := range containers {
		if cm, ok := c.(map[string]any); ok && cm["name"] == ManagerContainer {
			manager = cm
		}
	}
	if manager == nil {
		return nil, fmt.Errorf("no container named %q", ManagerContainer)
	}
	manager["image"] = image

	var args []any
	hasCertDir := false
	raw, _ := manager["args"].([]any)
	for _, a := range raw {
		s, _ := a.(string)
		name, _, _ := strings.Cut(s, "=")
		switch {
		case name == certRotationFlag:
			continue
		case contains(rotationOnlyFlags, name):
			continue
		case name == certDirFlag:
			hasCertDir = true
			args = append(args, certDirFlag+"="+OLMCertDir)
			continue
		}
		args = append(args, a)
	}
	args = append(args, certRotationFlag+"=false")
	if !hasCertDir {
		args = append(args, certDirFlag+"="+OLMCertDir)
	}
	// Without rights on webhook configurations the operator cannot read the
	// one OLM makes; an empty name turns its scope check off (OLM's
	// AllNamespaces webhook reaches every namespace).
	args = append(args, webhookConfigFlag+"=")
	manager["args"] = args

	// Volumes mounted where OLM mounts its certificate, or named like OLM's
	// volumes, would collide with them.
	dropped := map[string]bool{}
	for _, c := range containers {
		cm, _ := c.(map[string]any)
		mounts, _ := cm["volumeMounts"].([]any)
		var kept []any
		for _, m := range mounts {
			mm, _ := m.(map[string]any)
			name, _ := mm["name"].(string)
			if mm["mountPath"] == OLMCertDir || name == OLMCertVolume || name == OLMAPICertVolume {
				dropped[name] = true
				continue
			}
			kept = append(kept, m)
		}
		if len(mounts) > 0 {
			if len(kept) == 0 {
				delete(cm, "volumeMounts")
			} else {
				cm["volumeMounts"] = kept
			}
		}
	}
	if vols, ok := podSpec["volumes"].([]any); ok {
		var kept []any
		for _, v := range vols {
			vm, _ := v.(map[string]any)
			name, _ := vm["name"].(string)
			if dropped[name] || name == OLMCertVolume || name == OLMAPICertVolume {
				continue
			}
			kept = append(kept, v)
		}
		if len(kept) == 0 {
			delete(podSpec, "volumes")
		} else {
			podSpec["volumes"] = kept
		}
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

func dig(m map[string]any, keys ...string) (map[string]any, bool) {
	cur := m
	for _, k := range keys {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

func deepCopyJSON(m map[string]any) (map[string]any, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(raw, &out)
}

// webhookDefinitions turns the rendered ValidatingWebhookConfigurations into
// OLM webhook definitions. The Service each webhook calls gives the ports
// (OLM creates its own Service in front of the Deployment: containerPort is
// the Service port, targetPort the container's) and, through its selector,
// the Deployment. The namespaceSelector is not carried over: OLM sets it
// from the OperatorGroup.
func webhookDefinitions(cfg config) ([]WebhookDescription, map[string]bool, error) {
	var defs []WebhookDescription
	services := map[string]bool{}
	for _, o := range cfg.webhookConfigs {
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		if err := decodeStrict(o.JSON, &vwc); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", o.ID(), err)
		}
		for _, w := range vwc.Webhooks {
			svcRef := w.ClientConfig.Service
			if svcRef == nil {
				return nil, nil, fmt.Errorf("%s: webhook %s has no service reference; OLM only registers webhooks it serves through a Service", o.ID(), w.Name)
			}
			services[svcRef.Namespace+"/"+svcRef.Name] = true
			svc, err := findService(cfg, svcRef.Namespace, svcRef.Name)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: webhook %s: %w", o.ID(), w.Name, err)
			}
			port := ptr.Deref(svcRef.Port, 443)
			var target *intstr.IntOrString
			for _, p := range svc.Spec.Ports {
				if p.Port == port {
					t := p.TargetPort
					if t.Type == intstr.Int && t.IntVal == 0 {
						t = intstr.FromInt32(p.Port)
					}
					target = &t
				}
			}
			if target == nil {
				return nil, nil, fmt.Errorf("%s: webhook %s calls port %d, which Service %s does not expose", o.ID(), w.Name, port, svc.Name)
			}
			deployment, err := selectedDeployment(cfg, svc)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: webhook %s: %w", o.ID(), w.Name, err)
			}
			defs = append(defs, WebhookDescription{
				GenerateName:            w.Name,
				Type:                    ValidatingAdmissionWebhook,
				DeploymentName:          deployment,
				ContainerPort:           port,
				TargetPort:              target,
				Rules:                   w.Rules,
				FailurePolicy:           w.FailurePolicy,
				MatchPolicy:             w.MatchPolicy,
				ObjectSelector:          w.ObjectSelector,
				SideEffects:             w.SideEffects,
				TimeoutSeconds:          w.TimeoutSeconds,
				AdmissionReviewVersions: w.AdmissionReviewVersions,
				WebhookPath:             svcRef.Path,
			})
		}
	}
	return defs, services, nil
}

func findService(cfg config, ns, name string) (corev1.Service, error) {
	for _, o := range cfg.services {
		if o.Namespace == ns && o.Name == name {
			var svc corev1.Service
			if err := decodeStrict(o.JSON, &svc); err != nil {
				return svc, fmt.Errorf("%s: %w", o.ID(), err)
			}
			return svc, nil
		}
	}
	return corev1.Service{}, fmt.Errorf("the rendered config has no Service %s/%s", ns, name)
}

// selectedDeployment is the one Deployment whose pods the Service selects.
func selectedDeployment(cfg config, svc corev1.Service) (string, error) {
	var names []string
	for _, d := range cfg.deployments {
		var dep appsv1.Deployment
		if err := decodeStrict(d.JSON, &dep); err != nil {
			return "", fmt.Errorf("%s: %w", d.ID(), err)
		}
		if d.Namespace != svc.Namespace || len(svc.Spec.Selector) == 0 {
			continue
		}
		match := true
		for k, v := range svc.Spec.Selector {
			if dep.Spec.Template.Labels[k] != v {
				match = false
			}
		}
		if match {
			names = append(names, d.Name)
		}
	}
	if len(names) != 1 {
		return "", fmt.Errorf("the Service %s selects the pods of %d Deployments (%v), want exactly one", svc.Name, len(names), names)
	}
	return names[0], nil
}

// almExamples is the alm-examples annotation: the samples' custom resources
// of the owned CRDs, without namespaces (the console creates them in the
// namespace the user is in), as a JSON array.
func almExamples(samples []SourceFile, ownedKinds map[string]bool) (string, error) {
	examples := []map[string]any{}
	for _, s := range samples {
		objs, err := ParseObjects(s.Data)
		if err != nil {
			return "", fmt.Errorf("sample %s: %w", s.Name, err)
		}
		for _, o := range objs {
			if !ownedKinds[o.APIVersion+"/"+o.Kind] {
				continue
			}
			if meta, ok := o.Fields["metadata"].(map[string]any); ok {
				delete(meta, "namespace")
			}
			examples = append(examples, o.Fields)
		}
	}
	if len(examples) == 0 {
		return "", fmt.Errorf("config/samples has no custom resource of an owned CRD for alm-examples")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(examples); err != nil {
		return "", err
	}
	return strings.TrimSpace(buf.String()), nil
}

// extraManifest ships an object config/ installs besides the CSV's
// contents, without its namespace: OLM creates it in the install namespace.
func extraManifest(o Object) (File, error) {
	fields, err := deepCopyJSON(o.Fields)
	if err != nil {
		return File{}, err
	}
	if meta, ok := fields["metadata"].(map[string]any); ok {
		delete(meta, "namespace")
	}
	if err := relabelForOLM(fields); err != nil {
		return File{}, fmt.Errorf("%s: %w", o.ID(), err)
	}
	data, err := toYAML(fields)
	if err != nil {
		return File{}, err
	}
	group := o.Group()
	version := o.APIVersion
	if group != "" {
		version = strings.TrimPrefix(o.APIVersion, group+"/")
		group = strings.ReplaceAll(group, ".", "-") + "_"
	}
	name := fmt.Sprintf("%s_%s%s_%s.yaml", o.Name, group, version, strings.ToLower(o.Kind))
	return File{Path: ManifestsDir + "/" + name, Data: data}, nil
}

// DefaultAnnotations are bundle/metadata/annotations.yaml's annotations, and
// the bundle image's labels.
func DefaultAnnotations() map[string]string {
	return map[string]string{
		AnnotationMediaType:      "registry+v1",
		AnnotationManifests:      "manifests/",
		AnnotationMetadata:       "metadata/",
		AnnotationPackage:        PackageName,
		AnnotationChannels:       Channel,
		AnnotationDefaultChannel: DefaultChannel,
		AnnotationTestMediaType:  "scorecard+v1",
		AnnotationTestConfig:     "tests/scorecard/",
	}
}

// bundleDockerfile builds the bundle image: the bundle's directories and
// the annotations as labels.
func bundleDockerfile(annotations map[string]string) []byte {
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# Generated by hack/bundlegen (make bundle): the OLM bundle image. Do not edit.\n")
	b.WriteString("FROM scratch\n\n")
	b.WriteString("# The same annotations as bundle/metadata/annotations.yaml.\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "LABEL %s=%s\n", k, annotations[k])
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "COPY %s /manifests/\n", ManifestsDir)
	fmt.Fprintf(&b, "COPY %s /metadata/\n", MetadataDir)
	fmt.Fprintf(&b, "COPY %s /tests/scorecard/\n", ScorecardDir)
	return []byte(b.String())
}

// ScorecardTests are the scorecard's built-in tests the bundle runs: the
// basic spec check and the OLM suite.
var ScorecardTests = []struct{ Name, Suite string }{
	{"basic-check-spec", "basic"},
	{"olm-bundle-validation", "olm"},
	{"olm-crds-have-validation", "olm"},
	{"olm-crds-have-resources", "olm"},
	{"olm-spec-descriptors", "olm"},
	{"olm-status-descriptors", "olm"},
}

func scorecardConfig(image string) ScorecardConfig {
	stage := ScorecardStage{Parallel: true}
	for _, t := range ScorecardTests {
		stage.Tests = append(stage.Tests, ScorecardTest{
			Image:      image,
			Entrypoint: []string{"scorecard-test", t.Name},
			Labels:     map[string]string{"suite": t.Suite, "test": t.Name + "-test"},
		})
	}
	return ScorecardConfig{
		APIVersion: "scorecard.operatorframework.io/v1alpha3",
		Kind:       "Configuration",
		Metadata:   ObjectMeta{Name: "config"},
		Stages:     []ScorecardStage{stage},
	}
}
