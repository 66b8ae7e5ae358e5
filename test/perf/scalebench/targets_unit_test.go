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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// go test -tags perf -run 'TestTargets|TestStatusLag|TestVerdict|TestToFloor' ./test/perf/scalebench (no cluster).

// meetingRun is a TDB and a PDB turn of one run that meets every target: the
// status lag and writes of the 300-node run of issue 29.
func meetingRun() (tdb, pdb *system) {
	tdb = &system{DrainWallS: 90, AllowedP99MS: 4000, Allowed: 888, StatusLagP99AllMS: 1981, StatusLagSamples: 5000,
		OperatorPeakHeapMiB: 120, OperatorAvgCores: 0.2, WritesPerAllowed: 2.45}
	pdb = &system{DrainWallS: 100, AllowedP99MS: 9000, Allowed: 921, StatusLagP99AllMS: 128103, StatusLagSamples: 2000,
		WritesPerAllowed: 3.71}
	return tdb, pdb
}

func TestTargets(t *testing.T) {
	const (
		lag    = "status lag p99 ≤ 1/10 of core's"
		writes = "operator writes per allowed eviction ≤ core's PDB status writes"
	)
	tests := []struct {
		name   string
		change func(tdb, pdb *system)
		missed []string
	}{
		{name: "both met", change: func(_, _ *system) {}},
		{name: "lag exactly a tenth of core's, writes equal to core's", change: func(tdb, pdb *system) {
			tdb.StatusLagP99AllMS, pdb.StatusLagP99AllMS = 1000, 10000
			tdb.WritesPerAllowed, pdb.WritesPerAllowed = 3, 3
		}},
		{name: "lag over a tenth of core's", change: func(tdb, pdb *system) { tdb.StatusLagP99AllMS, pdb.StatusLagP99AllMS = 1001, 10000 },
			missed: []string{lag}},
		{name: "lag under 1 s but over a tenth of core's", change: func(tdb, pdb *system) { tdb.StatusLagP99AllMS, pdb.StatusLagP99AllMS = 400, 3000 },
			missed: []string{lag}},
		{name: "core's lag not measured", change: func(_, pdb *system) { pdb.StatusLagSamples, pdb.StatusLagP99AllMS = 0, 0 },
			missed: []string{lag}},
		{name: "operator's lag not measured", change: func(tdb, _ *system) { tdb.StatusLagSamples, tdb.StatusLagP99AllMS = 0, 0 },
			missed: []string{lag}},
		{name: "only never-shown changes measured for core", change: func(_, pdb *system) {
			pdb.StatusLagSamples, pdb.StatusLagUnresolved = 0, 14
		}},
		{name: "more writes than core's", change: func(tdb, _ *system) { tdb.WritesPerAllowed = 3.72 },
			missed: []string{writes}},
		{name: "no eviction allowed in core's turn", change: func(_, pdb *system) { pdb.Allowed, pdb.WritesPerAllowed = 0, 0 },
			missed: []string{writes}},
		{name: "both missed", change: func(tdb, _ *system) { tdb.StatusLagP99AllMS, tdb.WritesPerAllowed = 20000, 4 },
			missed: []string{lag, writes}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tdb, pdb := meetingRun()
			tt.change(tdb, pdb)
			var missed []string
			for _, tg := range targets(tdb, pdb) {
				if !tg.met {
					missed = append(missed, tg.name)
				}
			}
			if diff := cmp.Diff(tt.missed, missed); diff != "" {
				t.Errorf("targets missed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTargetsShowBothFigures(t *testing.T) {
	tdb, pdb := meetingRun()
	tdb.WebhookWritesPerAllowed, tdb.StatusWritesPerAllowed = 1.06, 1.39
	pdb.EvictionHandlerWritesPerAllowed, pdb.DisruptionControllerWritesPerAllowed = 1, 2.71
	got := map[string]string{}
	for _, tg := range targets(tdb, pdb) {
		got[tg.name] = tg.got
	}
	want := map[string]string{
		"status lag p99 ≤ 1/10 of core's": "1981 ms vs core's 128103 ms (1/65); changes shown 5000 and 2000, never shown 0 and 0",
		"operator writes per allowed eviction ≤ core's PDB status writes": "2.45 vs core's 3.71; operator: webhook 1.06, status controller 1.39; " +
			"core: eviction handler 1.00, disruption controller 2.71",
	}
	for name, w := range want {
		if diff := cmp.Diff(w, got[name]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

func TestVerdictNoBudget(t *testing.T) {
	tdb, pdb := meetingRun()
	none := &system{DrainWallS: 30, AllowedP99MS: 500}
	rep := &report{Systems: map[string]*system{systemTDB: tdb, systemPDB: pdb, systemNone: none}}
	if got := verdict(rep); len(got) != 0 {
		t.Errorf("a run meeting every target, with a no-budget turn far faster, failed: %q", got)
	}
	none.DrainErrors = []string{"scale-node-1: timed out"}
	if diff := cmp.Diff([]string{"none: 1 drains failed, e.g. scale-node-1: timed out"}, verdict(rep)); diff != "" {
		t.Errorf("a failed drain of the no-budget turn (-want +got):\n%s", diff)
	}
}

func TestToFloor(t *testing.T) {
	tdb, pdb := meetingRun()
	none := &system{DrainWallS: 30, AllowedP99MS: 500}
	toFloor(map[string]*system{systemTDB: tdb, systemPDB: pdb, systemNone: none})
	got := [][2]float64{{tdb.DrainWallToFloor, tdb.AllowedP99ToFloor}, {pdb.DrainWallToFloor, pdb.AllowedP99ToFloor}, {none.DrainWallToFloor, none.AllowedP99ToFloor}}
	want := [][2]float64{{3, 8}, {100.0 / 30, 18}, {0, 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ratios to the floor, TDB, PDB, none (-want +got):\n%s", diff)
	}
}

// A turn that ends before its slowest statuses must not shorten its p99 by
// leaving them out: core's records of StatefulSet pods keep a count from
// its status for 2 minutes, past a small drain's end.
func TestStatusLagCountsNeverShown(t *testing.T) {
	s := &system{}
	for range 95 {
		s.lags = append(s.lags, 20*time.Millisecond)
	}
	for range 5 {
		s.neverShown = append(s.neverShown, 15*time.Second)
	}
	s.finish()
	got := [2]float64{s.StatusLagP99MS, s.StatusLagP99AllMS}
	if diff := cmp.Diff([2]float64{20, 15000}, got); diff != "" {
		t.Errorf("p99 of the shown changes, and of all with the never shown at their age (-want +got):\n%s", diff)
	}
}
