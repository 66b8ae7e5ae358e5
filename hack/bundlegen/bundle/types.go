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
	"encoding/json"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The ClusterServiceVersion as OLM documents it (operators.coreos.com/v1alpha1),
// limited to the fields this bundle uses. The operator-framework modules are
// not available here; these types follow the published schema field for
// field, so a strict decode of a CSV into them fails on a field OLM does not
// know. Deployment specs stay raw JSON: the generator copies them from the
// rendered config untouched, and the validation decodes them strictly into
// apps/v1 DeploymentSpec.

// CSVAPIVersion and CSVKind identify a ClusterServiceVersion.
const (
	CSVAPIVersion = "operators.coreos.com/v1alpha1"
	CSVKind       = "ClusterServiceVersion"
)

// ClusterServiceVersion tells OLM how to install and present an operator.
type ClusterServiceVersion struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   ObjectMeta `json:"metadata"`
	Spec       CSVSpec    `json:"spec"`
}

// ObjectMeta is the part of metadata a CSV in a bundle carries (no
// creationTimestamp, so the output is reproducible).
type ObjectMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// CSVSpec is the ClusterServiceVersion's spec.
type CSVSpec struct {
	CustomResourceDefinitions CustomResourceDefinitions `json:"customresourcedefinitions,omitempty"`
	Description               string                    `json:"description,omitempty"`
	DisplayName               string                    `json:"displayName"`
	Icon                      []Icon                    `json:"icon,omitempty"`
	Install                   NamedInstallStrategy      `json:"install"`
	InstallModes              []InstallMode             `json:"installModes,omitempty"`
	Keywords                  []string                  `json:"keywords,omitempty"`
	Links                     []AppLink                 `json:"links,omitempty"`
	Maintainers               []Maintainer              `json:"maintainers,omitempty"`
	Maturity                  string                    `json:"maturity,omitempty"`
	MinKubeVersion            string                    `json:"minKubeVersion,omitempty"`
	Provider                  AppLink                   `json:"provider,omitempty"`
	Replaces                  string                    `json:"replaces,omitempty"`
	Version                   string                    `json:"version,omitempty"`
	WebhookDefinitions        []WebhookDescription      `json:"webhookdefinitions,omitempty"`
}

// CustomResourceDefinitions lists the CRDs the operator owns and needs.
type CustomResourceDefinitions struct {
	Owned    []CRDDescription `json:"owned,omitempty"`
	Required []CRDDescription `json:"required,omitempty"`
}

// CRDDescription presents one CRD version in OLM's UI.
type CRDDescription struct {
	Name              string                 `json:"name"`
	Version           string                 `json:"version"`
	Kind              string                 `json:"kind"`
	DisplayName       string                 `json:"displayName,omitempty"`
	Description       string                 `json:"description,omitempty"`
	Resources         []APIResourceReference `json:"resources,omitempty"`
	SpecDescriptors   []Descriptor           `json:"specDescriptors,omitempty"`
	StatusDescriptors []Descriptor           `json:"statusDescriptors,omitempty"`
}

// APIResourceReference is a Kubernetes resource a custom resource uses.
type APIResourceReference struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// Descriptor describes one field of a custom resource's spec or status.
type Descriptor struct {
	Path         string          `json:"path"`
	DisplayName  string          `json:"displayName,omitempty"`
	Description  string          `json:"description,omitempty"`
	XDescriptors []string        `json:"x-descriptors,omitempty"`
	Value        json.RawMessage `json:"value,omitempty"`
}

// Icon is a base64-encoded image.
type Icon struct {
	Data      string `json:"base64data"`
	MediaType string `json:"mediatype"`
}

// AppLink is a named URL.
type AppLink struct {
	Name string `json:"name,omitempty"`
	URL  string `json:"url,omitempty"`
}

// Maintainer is a person or team maintaining the operator.
type Maintainer struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

// InstallModeType is one of the four OperatorGroup shapes.
type InstallModeType string

// The install modes OLM knows.
const (
	InstallModeOwnNamespace    InstallModeType = "OwnNamespace"
	InstallModeSingleNamespace InstallModeType = "SingleNamespace"
	InstallModeMultiNamespace  InstallModeType = "MultiNamespace"
	InstallModeAllNamespaces   InstallModeType = "AllNamespaces"
)

// InstallMode says whether the operator supports an install mode.
type InstallMode struct {
	Type      InstallModeType `json:"type"`
	Supported bool            `json:"supported"`
}

// InstallStrategyDeployment is the only install strategy OLM implements.
const InstallStrategyDeployment = "deployment"

// NamedInstallStrategy is spec.install.
type NamedInstallStrategy struct {
	StrategyName string                    `json:"strategy"`
	StrategySpec StrategyDetailsDeployment `json:"spec,omitempty"`
}

// StrategyDetailsDeployment holds the deployments and their RBAC.
type StrategyDetailsDeployment struct {
	ClusterPermissions []StrategyDeploymentPermissions `json:"clusterPermissions,omitempty"`
	DeploymentSpecs    []StrategyDeploymentSpec        `json:"deployments"`
	Permissions        []StrategyDeploymentPermissions `json:"permissions,omitempty"`
}

// StrategyDeploymentPermissions are rules granted to a service account;
// OLM creates the account, the (Cluster)Role and the binding.
type StrategyDeploymentPermissions struct {
	ServiceAccountName string              `json:"serviceAccountName"`
	Rules              []rbacv1.PolicyRule `json:"rules"`
}

// StrategyDeploymentSpec is one Deployment OLM creates.
type StrategyDeploymentSpec struct {
	Name  string            `json:"name"`
	Label map[string]string `json:"label,omitempty"`
	// Spec is an apps/v1 DeploymentSpec, kept as the rendered config has it.
	Spec json.RawMessage `json:"spec"`
}

// WebhookAdmissionType is the kind of webhook OLM registers.
type WebhookAdmissionType string

// The admission webhook types.
const (
	ValidatingAdmissionWebhook WebhookAdmissionType = "ValidatingAdmissionWebhook"
	MutatingAdmissionWebhook   WebhookAdmissionType = "MutatingAdmissionWebhook"
)

// WebhookDescription is an admission webhook OLM registers, pointing at a
// Service it creates in front of DeploymentName, with a certificate it
// issues and mounts into that Deployment. OLM sets the namespaceSelector
// itself, from the OperatorGroup; the description has no field for it.
type WebhookDescription struct {
	GenerateName            string                                          `json:"generateName"`
	Type                    WebhookAdmissionType                            `json:"type"`
	DeploymentName          string                                          `json:"deploymentName,omitempty"`
	ContainerPort           int32                                           `json:"containerPort,omitempty"`
	TargetPort              *intstr.IntOrString                             `json:"targetPort,omitempty"`
	Rules                   []admissionregistrationv1.RuleWithOperations    `json:"rules,omitempty"`
	FailurePolicy           *admissionregistrationv1.FailurePolicyType      `json:"failurePolicy,omitempty"`
	MatchPolicy             *admissionregistrationv1.MatchPolicyType        `json:"matchPolicy,omitempty"`
	ObjectSelector          *metav1.LabelSelector                           `json:"objectSelector,omitempty"`
	SideEffects             *admissionregistrationv1.SideEffectClass        `json:"sideEffects"`
	TimeoutSeconds          *int32                                          `json:"timeoutSeconds,omitempty"`
	AdmissionReviewVersions []string                                        `json:"admissionReviewVersions"`
	ReinvocationPolicy      *admissionregistrationv1.ReinvocationPolicyType `json:"reinvocationPolicy,omitempty"`
	WebhookPath             *string                                         `json:"webhookPath,omitempty"`
}

// Annotations is bundle/metadata/annotations.yaml.
type Annotations struct {
	Annotations map[string]string `json:"annotations"`
}

// The bundle annotation keys (also the bundle image's labels).
const (
	AnnotationMediaType      = "operators.operatorframework.io.bundle.mediatype.v1"
	AnnotationManifests      = "operators.operatorframework.io.bundle.manifests.v1"
	AnnotationMetadata       = "operators.operatorframework.io.bundle.metadata.v1"
	AnnotationPackage        = "operators.operatorframework.io.bundle.package.v1"
	AnnotationChannels       = "operators.operatorframework.io.bundle.channels.v1"
	AnnotationDefaultChannel = "operators.operatorframework.io.bundle.channel.default.v1"
	AnnotationTestMediaType  = "operators.operatorframework.io.test.mediatype.v1"
	AnnotationTestConfig     = "operators.operatorframework.io.test.config.v1"
)

// ScorecardConfig is bundle/tests/scorecard/config.yaml
// (scorecard.operatorframework.io/v1alpha3 Configuration).
type ScorecardConfig struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Metadata   ObjectMeta       `json:"metadata"`
	Stages     []ScorecardStage `json:"stages"`
}

// ScorecardStage is a set of tests, run in parallel or one after another.
type ScorecardStage struct {
	Parallel bool            `json:"parallel,omitempty"`
	Tests    []ScorecardTest `json:"tests"`
}

// ScorecardTest runs Entrypoint in Image against the bundle.
type ScorecardTest struct {
	Image      string            `json:"image"`
	Entrypoint []string          `json:"entrypoint,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
}
