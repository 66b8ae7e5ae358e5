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

package kwokenv

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Sampler measures each zone's unavailable pods at a fixed interval (with
// Watcher.Unavailable, or another measurement) until it is stopped, and
// keeps what the demo, the benches and the e2e suite judge a budget by: the
// maxima, the samples that raised them, and a timeline of every change. It
// is the one unavailability sampler of the project.
type Sampler struct {
	measure  func(ctx context.Context) (map[string]int, error)
	onSample func(at time.Duration, unavailable map[string]int)
	start    time.Time
	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once

	mu       sync.Mutex
	rep      SampleReport
	timeline strings.Builder
	lastLine string
}

// SampleReport is what a Sampler saw.
type SampleReport struct {
	// MaxZone is the most pods seen unavailable at once, per zone.
	MaxZone map[string]int
	// MaxDisruptedZones is the most zones seen with a pod unavailable at
	// once; MaxTotal the most pods unavailable at once over all zones.
	MaxDisruptedZones, MaxTotal int
	// Samples counts the measurements; Errors those that failed.
	Samples, Errors int
	// Evidence lists the first 20 samples that raised a maximum.
	Evidence []string
	// Timeline has a line per change: the time since the start and each
	// zone's unavailable pods.
	Timeline string
}

// StartSampler starts measuring every interval (100 ms when 0). onSample,
// when set, sees every successful measurement as it is taken.
func StartSampler(measure func(ctx context.Context) (map[string]int, error), interval time.Duration, onSample func(at time.Duration, unavailable map[string]int)) *Sampler {
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sampler{measure: measure, onSample: onSample, start: time.Now(), cancel: cancel, done: make(chan struct{}),
		rep: SampleReport{MaxZone: map[string]int{}}}
	go s.run(ctx, interval)
	return s
}

func (s *Sampler) run(ctx context.Context, interval time.Duration) {
	defer close(s.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		u, err := s.measure(ctx)
		s.record(u, err, ctx.Err() != nil)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *Sampler) record(u map[string]int, err error, cancelled bool) {
	at := time.Since(s.start)
	s.mu.Lock()
	if err != nil {
		if !cancelled {
			s.rep.Errors++
		}
		s.mu.Unlock()
		return
	}
	s.rep.Samples++
	total, disrupted, raised := 0, 0, false
	for z, n := range u {
		total += n
		if n > 0 {
			disrupted++
		}
		if prev, ok := s.rep.MaxZone[z]; !ok || n > prev {
			raised = raised || n > prev
			s.rep.MaxZone[z] = n
		}
	}
	if disrupted > s.rep.MaxDisruptedZones {
		s.rep.MaxDisruptedZones, raised = disrupted, true
	}
	if total > s.rep.MaxTotal {
		s.rep.MaxTotal, raised = total, true
	}
	line := zoneLine(u)
	if raised && len(s.rep.Evidence) < 20 {
		s.rep.Evidence = append(s.rep.Evidence, fmt.Sprintf("t+%5.1fs unavailable: %s", at.Seconds(), line))
	}
	if line != s.lastLine {
		fmt.Fprintf(&s.timeline, "%7.2fs  %s\n", at.Seconds(), line)
		s.lastLine = line
	}
	s.mu.Unlock()
	if s.onSample != nil {
		s.onSample(at, u)
	}
}

// Stop stops sampling and returns the report.
func (s *Sampler) Stop() SampleReport {
	s.stopOnce.Do(func() {
		s.cancel()
		<-s.done
	})
	return s.Report()
}

// Report is what the sampler has seen so far, without stopping it.
func (s *Sampler) Report() SampleReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := s.rep
	rep.MaxZone = make(map[string]int, len(s.rep.MaxZone))
	for z, n := range s.rep.MaxZone {
		rep.MaxZone[z] = n
	}
	rep.Evidence = append([]string(nil), s.rep.Evidence...)
	rep.Timeline = s.timeline.String()
	return rep
}

// String formats the report, zones sorted, with the evidence.
func (r SampleReport) String() string {
	zs := make([]string, 0, len(r.MaxZone))
	for z := range r.MaxZone {
		zs = append(zs, z)
	}
	sort.Strings(zs)
	var b strings.Builder
	b.WriteString("max unavailable per zone:")
	for _, z := range zs {
		fmt.Fprintf(&b, " %s=%d", z, r.MaxZone[z])
	}
	fmt.Fprintf(&b, "; max zones disrupted at once: %d; max unavailable in total: %d (%d samples, %d errors)",
		r.MaxDisruptedZones, r.MaxTotal, r.Samples, r.Errors)
	for _, e := range r.Evidence {
		b.WriteString("\n    " + e)
	}
	return b.String()
}

// zoneLine formats each zone's count, zones sorted: "zone-a=1 zone-b=0".
func zoneLine(u map[string]int) string {
	zs := make([]string, 0, len(u))
	for z := range u {
		zs = append(zs, z)
	}
	sort.Strings(zs)
	parts := make([]string, len(zs))
	for i, z := range zs {
		parts[i] = fmt.Sprintf("%s=%d", z, u[z])
	}
	return strings.Join(parts, " ")
}
