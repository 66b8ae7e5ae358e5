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

package certs

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// recordedRequests is the last request a RoundTripper was given.
type recordedRequests struct{ last *http.Request }

func (r *recordedRequests) RoundTrip(req *http.Request) (*http.Response, error) {
	r.last = req
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
}

// The rotator's lists and watches of the namespace's Secrets ask for the
// one Secret; nothing else it sends changes.
func TestOneSecretRequestsNarrowTheSecretCollectionOnly(t *testing.T) {
	cases := []struct {
		name, method, url string
		want              string // the URL sent
	}{
		{name: "list", method: http.MethodGet,
			url:  "https://api/api/v1/namespaces/tdb-system/secrets?limit=500&resourceVersion=0",
			want: "https://api/api/v1/namespaces/tdb-system/secrets?fieldSelector=metadata.name%3Dcert&limit=500&resourceVersion=0"},
		{name: "watch", method: http.MethodGet,
			url:  "https://api/api/v1/namespaces/tdb-system/secrets?allowWatchBookmarks=true&watch=true",
			want: "https://api/api/v1/namespaces/tdb-system/secrets?allowWatchBookmarks=true&fieldSelector=metadata.name%3Dcert&watch=true"},
		{name: "behind a proxy's path prefix", method: http.MethodGet,
			url:  "https://proxy/k8s/clusters/c-1/api/v1/namespaces/tdb-system/secrets",
			want: "https://proxy/k8s/clusters/c-1/api/v1/namespaces/tdb-system/secrets?fieldSelector=metadata.name%3Dcert"},
		{name: "a field selector of its own is kept, and ANDed", method: http.MethodGet,
			url:  "https://api/api/v1/namespaces/tdb-system/secrets?fieldSelector=type%3Dkubernetes.io%2Ftls",
			want: "https://api/api/v1/namespaces/tdb-system/secrets?fieldSelector=type%3Dkubernetes.io%2Ftls%2Cmetadata.name%3Dcert"},
		{name: "already narrowed", method: http.MethodGet,
			url:  "https://api/api/v1/namespaces/tdb-system/secrets?fieldSelector=metadata.name%3Dcert",
			want: "https://api/api/v1/namespaces/tdb-system/secrets?fieldSelector=metadata.name%3Dcert"},
		{name: "get by name", method: http.MethodGet,
			url:  "https://api/api/v1/namespaces/tdb-system/secrets/cert",
			want: "https://api/api/v1/namespaces/tdb-system/secrets/cert"},
		{name: "update by name", method: http.MethodPut,
			url:  "https://api/api/v1/namespaces/tdb-system/secrets/cert",
			want: "https://api/api/v1/namespaces/tdb-system/secrets/cert"},
		{name: "another namespace's Secrets", method: http.MethodGet,
			url:  "https://api/api/v1/namespaces/other/secrets",
			want: "https://api/api/v1/namespaces/other/secrets"},
		{name: "webhook configurations", method: http.MethodGet,
			url:  "https://api/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations?watch=true",
			want: "https://api/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations?watch=true"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next := &recordedRequests{}
			rt := &oneSecretRequests{next: next, collection: "/api/v1/namespaces/tdb-system/secrets", name: "cert"}
			req := httptest.NewRequest(c.method, c.url, nil)
			sent := req.URL.String()
			if _, err := rt.RoundTrip(req); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, next.last.URL.String()); diff != "" {
				t.Errorf("URL sent (-want +got):\n%s", diff)
			}
			if req.URL.String() != sent {
				t.Errorf("the caller's request was changed: %s", req.URL)
			}
		})
	}
}

// The rotator gets the manager's config with the narrowing added; the
// manager's own config is left as it is.
func TestOneSecretManagerNarrowsACopyOfTheConfig(t *testing.T) {
	base := &rest.Config{Host: "https://api"}
	m := newOneSecretManager(configOnly{cfg: base}, "tdb-system", "cert")
	if base.WrapTransport != nil {
		t.Fatal("the manager's own config was changed")
	}
	next := &recordedRequests{}
	rt := m.GetConfig().WrapTransport(next)
	u, _ := url.Parse("https://api/api/v1/namespaces/tdb-system/secrets")
	if _, err := rt.RoundTrip(&http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}}); err != nil {
		t.Fatal(err)
	}
	if got := next.last.URL.Query().Get("fieldSelector"); got != "metadata.name=cert" {
		t.Errorf("fieldSelector = %q, want metadata.name=cert", got)
	}
}

// configOnly is a manager that only has a config.
type configOnly struct {
	manager.Manager
	cfg *rest.Config
}

func (c configOnly) GetConfig() *rest.Config { return c.cfg }
