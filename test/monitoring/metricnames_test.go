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

package monitoring

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
)

// foreignMetrics are the metrics the alerts and the dashboard may query
// that the operator does not export: the kube-apiserver's view of the
// webhook, and Prometheus's own up. Every entry must be used.
var foreignMetrics = map[string]string{
	"up": "Prometheus, per scraped target",
	"apiserver_admission_webhook_rejection_count": "kube-apiserver (k8s.io/apiserver/pkg/admission/metrics), v1.37",
	"apiserver_admission_webhook_fail_open_count": "kube-apiserver (k8s.io/apiserver/pkg/admission/metrics), v1.37",
	"apiserver_admission_webhook_request_total":   "kube-apiserver (k8s.io/apiserver/pkg/admission/metrics), v1.37",
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// operatorMetrics returns the names of the series the operator's metrics
// expose (a histogram's _bucket, _sum and _count), from the collectors
// operatormetrics declares, after checking that each is registered with
// the manager's registry, and from what that registry gathers.
func operatorMetrics(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, c := range operatormetrics.Collectors() {
		are := prometheus.AlreadyRegisteredError{}
		if err := metrics.Registry.Register(c); !errors.As(err, &are) {
			t.Errorf("a collector of operatormetrics is not registered with controller-runtime's metrics.Registry (Register: %v)", err)
		}
		descs := make(chan *prometheus.Desc, 4)
		c.Describe(descs)
		close(descs)
		for d := range descs {
			m := fqName.FindStringSubmatch(d.String())
			if m == nil {
				t.Fatalf("cannot read the name of %s", d)
			}
			names[m[1]] = true
			switch c.(type) {
			case prometheus.Histogram, *prometheus.HistogramVec:
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					names[m[1]+s] = true
				}
			}
		}
	}
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		names[f.GetName()] = true
	}
	return names
}

var (
	quoted    = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`")
	matchers  = regexp.MustCompile(`\{[^}]*\}`)
	ranges    = regexp.MustCompile(`\[[^\]]*\]`)
	grouping  = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	ident     = regexp.MustCompile(`(?:^|[^a-zA-Z0-9_:.$])([a-zA-Z_:][a-zA-Z0-9_:]*)`)
	keywords  = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true, "by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}
	labelVals = regexp.MustCompile(`^\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$`)
)

// metricNames returns the metric names a PromQL expression selects: its
// identifiers that are neither functions, keywords, label names (in
// matchers and grouping clauses) nor inside strings or ranges. A Grafana
// label_values(query, label) query counts as its query.
func metricNames(expr string) []string {
	if m := labelVals.FindStringSubmatch(expr); m != nil {
		expr = m[1]
	}
	expr = quoted.ReplaceAllString(expr, `""`)
	expr = matchers.ReplaceAllString(expr, " ")
	expr = ranges.ReplaceAllString(expr, " ")
	expr = grouping.ReplaceAllString(expr, " ")
	var out []string
	for _, m := range ident.FindAllStringSubmatchIndex(expr, -1) {
		name := expr[m[2]:m[3]]
		if keywords[strings.ToLower(name)] || strings.HasPrefix(strings.TrimLeft(expr[m[3]:], " \t\n"), "(") {
			continue // a keyword or a function
		}
		out = append(out, name)
	}
	return out
}

func TestMetricNamesOfAnExpression(t *testing.T) {
	for expr, want := range map[string][]string{
		`sum by (job, le) (rate(tdb_x_bucket{reason=~"A|B", job="j"}[5m])) > 1`:                      {"tdb_x_bucket"},
		`max by (namespace, policy) (a) unless on (namespace) max by (namespace) (b{policy="None"})`: {"a", "b"},
		`max by (namespace, tdb, domain) (time() - tdb_blocked{namespace=~"$namespace"}) > 5 * 60`:   {"tdb_blocked"},
		`absent(up{job="x"} == 1)`:                                                            {"up"},
		`label_values(tdb_allowed{namespace=~"$namespace"}, tdb)`:                             {"tdb_allowed"},
		`sum(rate(a_sum[$__rate_interval])) / sum(rate(a_count[$__rate_interval])) offset 5m`: {"a_sum", "a_count"},
		`tdb_expiry - time() < 21 * 24 * 3600 and 1e+09 > bool 2`:                             {"tdb_expiry"},
	} {
		if diff := cmp.Diff(want, metricNames(expr)); diff != "" {
			t.Errorf("metricNames(%q) (-want +got):\n%s", expr, diff)
		}
	}
}

// dashboard is the part of a Grafana dashboard read here.
type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Datasource *datasource     `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	ID         int         `json:"id"`
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Datasource *datasource `json:"datasource"`
	Targets    []struct {
		Expr       string      `json:"expr"`
		Datasource *datasource `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	var d dashboard
	if err := json.Unmarshal(read(t, dashboardFile), &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// queries lists every PromQL query of the rules and the dashboard, by where
// it is.
func queries(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, g := range loadRules(t).Spec.Groups {
		for i, r := range g.Rules {
			out[fmt.Sprintf("%s: %s rule %d (%s)", rulesFile, g.Name, i, r.Alert+r.Record)] = r.Expr
		}
	}
	d := loadDashboard(t)
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for i, tg := range p.Targets {
				out[fmt.Sprintf("%s: panel %q target %d", dashboardFile, p.Title, i)] = tg.Expr
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			var s string
			if err := json.Unmarshal(v.Query, &s); err != nil {
				t.Fatalf("%s: variable %s: query %s", dashboardFile, v.Name, v.Query)
			}
			q.Query = s
		}
		out[dashboardFile+": variable "+v.Name] = q.Query
	}
	return out
}

// Every metric the alerts and the dashboard query is one the operator
// registers, or one of the few foreign metrics allowed (each of which is
// used); the kube-state-metrics names of config/kube-state-metrics are
// allowed too.
func TestEveryQueriedMetricIsExported(t *testing.T) {
	exported := operatorMetrics(t)
	for name := range kubeStateMetricsNames(t) {
		exported[name] = true
	}
	usedForeign := map[string]bool{}
	tdbUsed := map[string]bool{}
	qs := queries(t)
	if len(qs) < 20 {
		t.Fatalf("found %d queries", len(qs))
	}
	for where, expr := range qs {
		names := metricNames(expr)
		if len(names) == 0 {
			t.Errorf("%s: %q names no metric", where, expr)
		}
		for _, n := range names {
			switch {
			case exported[n]:
				tdbUsed[n] = true
			case foreignMetrics[n] != "":
				usedForeign[n] = true
			default:
				t.Errorf("%s: %q queries %s, which the operator does not export (and is not allowed as foreign)", where, expr, n)
			}
		}
	}
	for n := range foreignMetrics {
		if !usedForeign[n] {
			t.Errorf("foreign metric %s is allowed but no query uses it: remove it from foreignMetrics", n)
		}
	}
	var used []string
	for n := range tdbUsed {
		used = append(used, n)
	}
	sort.Strings(used)
	t.Logf("operator metrics queried: %s", strings.Join(used, " "))
}

// The dashboard: one data source variable for every query, unique panel
// ids, and the subjects it is for.
func TestDashboard(t *testing.T) {
	d := loadDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Errorf("uid %q, title %q: want both", d.UID, d.Title)
	}
	ids := map[int]bool{}
	var titles []string
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d is used twice", p.ID)
		}
		ids[p.ID] = true
		titles = append(titles, p.Title)
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, ds := range append([]*datasource{p.Datasource}, func() (out []*datasource) {
			for _, tg := range p.Targets {
				out = append(out, tg.Datasource)
			}
			return out
		}()...) {
			if ds == nil || ds.Type != "prometheus" || ds.UID != "${datasource}" {
				t.Errorf("panel %q: data source %+v, want the prometheus ${datasource} variable", p.Title, ds)
			}
		}
	}
	all := strings.ToLower(strings.Join(titles, "\n"))
	for _, subject := range []string{"allowance per domain", "healthy pods per domain", "refusals by reason", "decision latency", "status-write conflicts", "rollout progress"} {
		if !strings.Contains(all, subject) {
			t.Errorf("no panel about %q; panels: %v", subject, titles)
		}
	}
}

// docs/webhook.md's metrics table lists every metric the operator
// declares.
func TestWebhookDocListsEveryMetric(t *testing.T) {
	var rows []string
	for _, line := range strings.Split(string(read(t, webhookDoc)), "\n") {
		if strings.HasPrefix(line, "| `tdb_") {
			rows = append(rows, line)
		}
	}
	doc := strings.Join(rows, "\n")
	for _, c := range operatormetrics.Collectors() {
		descs := make(chan *prometheus.Desc, 4)
		c.Describe(descs)
		close(descs)
		for d := range descs {
			name := fqName.FindStringSubmatch(d.String())[1]
			if !strings.Contains(doc, "`"+name+"{") && !strings.Contains(doc, "`"+name+"`") {
				t.Errorf("docs/webhook.md's metrics table has no row for %s", name)
			}
		}
	}
}
