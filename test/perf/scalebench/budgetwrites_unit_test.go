//go:build perf

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

package scalebench

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// go test -tags perf -run TestParsePDBStatusWriters ./test/perf/scalebench (no cluster).

func TestParsePDBStatusWriters(t *testing.T) {
	event := func(at, verb, user, agent, resource, sub string, code int) string {
		return `{"kind":"Event","level":"Metadata","stage":"ResponseComplete","verb":"` + verb + `","user":{"username":"` + user + `"},` +
			`"userAgent":"` + agent + `","objectRef":{"resource":"` + resource + `","namespace":"scale-0","name":"w-1","apiGroup":"policy","apiVersion":"v1","subresource":"` + sub + `"},` +
			`"responseStatus":{"code":` + strconv.Itoa(code) + `},"stageTimestamp":"2026-11-28T10:00:` + at + `Z"}`
	}
	const (
		kcm      = "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/abc/disruption-controller"
		loopback = "kube-apiserver/v1.37.2 (linux/amd64) kubernetes/abc"
	)
	log := strings.Join([]string{
		event("01.000000", "update", "system:apiserver", loopback, "poddisruptionbudgets", "status", 200),
		event("01.500000", "update", "system:apiserver", loopback, "poddisruptionbudgets", "status", 409),
		event("02.000000", "update", "system:kube-controller-manager", kcm, "poddisruptionbudgets", "status", 200),
		event("02.100000", "update", "system:serviceaccount:kube-system:disruption-controller", "kube-controller-manager/v1.37.2", "poddisruptionbudgets", "status", 200),
		event("02.200000", "patch", "admin", "kubectl/v1.37.2", "poddisruptionbudgets", "status", 200),
		// Not status writes: a spec update, a read.
		event("02.300000", "update", "admin", "kubectl/v1.37.2", "poddisruptionbudgets", "", 200),
		event("02.400000", "get", "system:apiserver", loopback, "poddisruptionbudgets", "status", 200),
		// Outside the window: at its start (excluded), after its end.
		event("00.000000", "update", "system:apiserver", loopback, "poddisruptionbudgets", "status", 200),
		event("09.000000", "update", "system:apiserver", loopback, "poddisruptionbudgets", "status", 200),
		// Another policy's line, not decoded.
		`{"kind":"Event","stage":"ResponseComplete","verb":"delete","objectRef":{"resource":"pods"}} and more`,
	}, "\n")
	from := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	got, err := pdbStatusWriters(strings.NewReader(log), from, from.Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{writerEvictionHandler: 2, writerEvictionHandler + " " + writesConflicted: 1, writerDisruptionController: 2, writerOther: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("writers (-want +got):\n%s", diff)
	}
	if _, err := pdbStatusWriters(strings.NewReader(`{"objectRef":{"resource":"poddisruptionbudgets"`), from, from); err == nil {
		t.Error("a truncated line was read")
	}
}
