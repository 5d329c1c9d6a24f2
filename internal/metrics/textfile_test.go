package metrics

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// parseFile reads path with Prometheus' own text parser and returns the
// families, failing the test on anything it rejects.
func parseFile(t *testing.T, path string) map[string]*dto.MetricFamily {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	families, err := p.TextToMetricFamilies(f)
	if err != nil {
		b, _ := os.ReadFile(path)
		t.Fatalf("the text parser rejects %s: %v\n%s", path, err, b)
	}
	return families
}

// value is the sample of family name for lock, and whether there is one.
func value(families map[string]*dto.MetricFamily, name, lock string) (float64, bool) {
	f := families[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "lock" && l.GetValue() == lock {
				switch f.GetType() {
				case dto.MetricType_COUNTER:
					return m.GetCounter().GetValue(), true
				default:
					return m.GetGauge().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

// The file parses as the text format, with HELP and TYPE for every
// family; counters carry over from run to run, and a second lock name is
// merged in beside the first.
func TestUpdateWritesTheTextFormatAndCarriesCounters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "schedlock.prom")
	t0 := time.Unix(1_800_000_000, 0)
	runs := []Run{
		{Lock: "nightly", Started: t0, Ended: t0.Add(90 * time.Second), ExitCode: 0},
		{Lock: "nightly", Skipped: true, Ended: t0.Add(time.Hour)},
		{Lock: `odd "name"\x`, Started: t0, Ended: t0.Add(time.Second), ExitCode: 2},
		{Lock: "nightly", Started: t0.Add(2 * time.Hour), Ended: t0.Add(2*time.Hour + 5*time.Second), ExitCode: 113, Lost: true},
		{Lock: "nightly", Skipped: true, Ended: t0.Add(3 * time.Hour)},
		{Lock: "only-skipped", Skipped: true, Ended: t0},
	}
	for _, r := range runs {
		if err := Update(context.Background(), path, r); err != nil {
			t.Fatal(err)
		}
	}
	fams := parseFile(t, path)
	for _, f := range families {
		mf := fams[f.name]
		if mf == nil {
			t.Errorf("%s is missing", f.name)
			continue
		}
		if mf.GetHelp() == "" || strings.ToLower(mf.GetType().String()) != f.kind {
			t.Errorf("%s: help %q, type %s, want %s", f.name, mf.GetHelp(), mf.GetType(), f.kind)
		}
	}
	want := map[string]float64{
		LastStart:    float64(t0.Add(2 * time.Hour).Unix()),
		LastEnd:      float64(t0.Add(2*time.Hour + 5*time.Second).Unix()),
		LastDuration: 5,
		LastExitCode: 113,
		LastSuccess:  float64(t0.Add(90 * time.Second).Unix()),
		Runs:         2,
		Failed:       1,
		Skipped:      2,
		Lost:         1,
	}
	for name, w := range want {
		if got, ok := value(fams, name, "nightly"); !ok || got != w {
			t.Errorf("%s{lock=nightly} = %v (%v), want %v", name, got, ok, w)
		}
	}
	if got, ok := value(fams, LastExitCode, `odd "name"\x`); !ok || got != 2 {
		t.Errorf("the second lock's exit code = %v (%v), want 2", got, ok)
	}
	for name, w := range map[string]float64{Runs: 0, Skipped: 1, Failed: 0, Lost: 0} {
		if got, ok := value(fams, name, "only-skipped"); !ok || got != w {
			t.Errorf("%s{lock=only-skipped} = %v (%v), want %v", name, got, ok, w)
		}
	}
	if _, ok := value(fams, LastEnd, "only-skipped"); ok {
		t.Error("a lock that never ran here has a last-end time")
	}
	if _, ok := value(fams, LastSuccess, `odd "name"\x`); ok {
		t.Error("a lock that never succeeded has a last-success time")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// Concurrent updates of different lock names into one file all survive.
func TestConcurrentUpdatesMerge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.prom")
	const jobs, runsEach = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, jobs*runsEach)
	for j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range runsEach {
				now := time.Now()
				errs <- Update(context.Background(), path, Run{Lock: fmt.Sprintf("job-%d", j), Started: now, Ended: now})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	fams := parseFile(t, path)
	for j := range jobs {
		lock := fmt.Sprintf("job-%d", j)
		if got, _ := value(fams, Runs, lock); got != runsEach {
			t.Errorf("%s: %v runs, want %d (updates were lost)", lock, got, runsEach)
		}
	}
}

// A file in a directory that does not exist is refused with an error
// that names the directory; nothing is created.
func TestMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "no", "such")
	err := Update(context.Background(), filepath.Join(dir, "x.prom"), Run{Lock: "a", Ended: time.Now()})
	if !errors.Is(err, ErrNoDirectory) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("err = %v, want ErrNoDirectory naming %s", err, dir)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the directory was created: %v", err)
	}
}

// Samples of schedlock_ metrics this version does not write are
// schedlock's: the file is accepted, they are not kept; blank lines and
// CRLF endings are read too.
func TestLaterMetricsAreAcceptedNotKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.prom")
	old := "# HELP schedlock_future_seconds Later.\n# TYPE schedlock_future_seconds gauge\n" +
		`schedlock_future_seconds{lock="a",host="h"} 3` + "\r\n\n" + Runs + `{lock="a"} 41` + "\r\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Update(context.Background(), path, Run{Lock: "a", Ended: time.Now()}); err != nil {
		t.Fatal(err)
	}
	fams := parseFile(t, path)
	if got, _ := value(fams, Runs, "a"); got != 42 {
		t.Errorf("runs{a} = %v, want 42", got)
	}
	if fams["schedlock_future_seconds"] != nil {
		t.Error("a metric this version does not write was kept")
	}
}
