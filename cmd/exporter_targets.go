package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/exporter"
)

// targetsFile is the YAML file of `exporter --targets`.
type targetsFile struct {
	Targets []targetEntry `yaml:"targets"`
}

// targetEntry is one database of a targets file: a DSN or a DSN file, an
// optional name (the dsn label) and labels.
type targetEntry struct {
	Name    string            `yaml:"name"`
	DSN     string            `yaml:"dsn"`
	DSNFile string            `yaml:"dsn_file"`
	Labels  map[string]string `yaml:"labels"`
}

// maxTargetsFile bounds a targets file.
const maxTargetsFile = 1 << 20

// targets are the exporter's databases: --dsn, --dsn-file and --targets'
// entries, else the DSN of the environment. Every error is a usage error.
func (o *ExporterOptions) targets() ([]exporter.Target, error) {
	var entries []targetEntry
	for _, raw := range o.DSNs {
		entries = append(entries, targetEntry{DSN: raw})
	}
	for _, path := range o.DSNFiles {
		entries = append(entries, targetEntry{DSNFile: path})
	}
	if o.TargetsFile != "" {
		more, err := readTargetsFile(o.TargetsFile)
		if err != nil {
			return nil, usageErrorf(o.Command, "--targets %s: %v", o.TargetsFile, err)
		}
		entries = append(entries, more...)
	}
	if len(entries) == 0 {
		entries = []targetEntry{{}} // the environment's DSN
	}
	out := make([]exporter.Target, 0, len(entries))
	for i, te := range entries {
		t, err := o.target(te)
		if err != nil {
			where := "--dsn"
			if te.Name != "" || len(te.Labels) > 0 || i >= len(o.DSNs)+len(o.DSNFiles) && o.TargetsFile != "" {
				where = fmt.Sprintf("--targets %s, entry %d", o.TargetsFile, i+1-len(o.DSNs)-len(o.DSNFiles))
			}
			return nil, usageErrorf(o.Command, "%s: %v", where, err)
		}
		out = append(out, t)
	}
	if err := exporter.CheckTargets(out); err != nil {
		return nil, &UsageError{Err: err, Command: o.Command}
	}
	return out, nil
}

// target parses one entry into an exporter target.
func (o *ExporterOptions) target(te targetEntry) (exporter.Target, error) {
	s := dsn.Sources{DSN: te.DSN, File: te.DSNFile, Getenv: o.Factory.Getenv}
	if !o.Global.Quiet {
		s.Warn = o.IO.ErrOut
	}
	if te.DSN != "" || te.DSNFile != "" {
		s.Getenv = func(string) string { return "" } // an entry is its own DSN
	}
	raw, source, err := dsn.Resolve(s)
	if err != nil {
		return exporter.Target{}, err
	}
	d, err := dsn.Parse(raw)
	if err != nil {
		return exporter.Target{}, fmt.Errorf("%s: %w", source, err)
	}
	o.Factory.Scrubber.Merge(d.Scrubber())
	nameConnections(d, o.Command)
	tables, err := adminTables("", "", d, o.Command)
	if err != nil {
		return exporter.Target{}, err
	}
	zone, err := o.Global.tableTimeZone(o.Command, d)
	if err != nil {
		return exporter.Target{}, err
	}
	name := te.Name
	if name == "" {
		name = d.Redacted()
	}
	return exporter.Target{
		Name: name, Labels: te.Labels,
		List: dialects.ListOptions{Tables: zonedTables(tables, zone), All: true},
		Open: exporterOpen(d, o.Command),
	}, nil
}

// readTargetsFile reads the entries of a targets file; unknown keys, an
// entry with both or neither of dsn and dsn_file, and an empty list are
// errors.
func readTargetsFile(path string) ([]targetEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTargetsFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxTargetsFile {
		return nil, fmt.Errorf("larger than %d KiB", maxTargetsFile>>10)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var tf targetsFile
	if err := dec.Decode(&tf); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(tf.Targets) == 0 {
		return nil, errors.New("no targets: list them under \"targets:\", each with dsn or dsn_file")
	}
	for i, te := range tf.Targets {
		if (te.DSN == "") == (te.DSNFile == "") {
			return nil, fmt.Errorf("entry %d: give one of dsn and dsn_file", i+1)
		}
	}
	return tf.Targets, nil
}

// exporterOpen connects to d for the exporter: the backend `locks ls`
// opens, listed with the last runs of its jobs. Errors are scrubbed of
// d's password.
func exporterOpen(d *dsn.DSN, command string) exporter.OpenFunc {
	return func(ctx context.Context) (exporter.Source, error) {
		b, err := connectAdmin(ctx, d, command)
		if err != nil {
			return nil, d.Scrub(err)
		}
		l, err := lockLister(b)
		if err != nil {
			_ = b.Close()
			return nil, d.Scrub(err)
		}
		return &exporterSource{lister: withLastRuns(l, b), backend: b, target: d}, nil
	}
}

// exporterSource is an opened backend's listing.
type exporterSource struct {
	lister  dialects.LockLister
	backend dialects.Backend
	target  *dsn.DSN

	mu        sync.Mutex
	histories map[dialects.Table]dialects.RunHistory // run tables opened for RecentRuns
}

// RecentRuns returns the newest runs of e's job, newest first, at most n,
// from the run table `locks history` reads (one query); none for a lock
// without one.
func (s *exporterSource) RecentRuns(ctx context.Context, e dialects.LockEntry, n int) ([]dialects.Run, error) {
	name := e.Name
	if e.Namespace != "" {
		name = dialects.NamespacedName(e.Namespace, e.Name)
	}
	e.Name = name
	t, ok := runsTableOf(e)
	if !ok {
		return nil, nil
	}
	s.mu.Lock()
	h, ok := s.histories[t]
	if !ok {
		var err error
		if h, err = runHistoryOf(s.backend, t); err != nil {
			s.mu.Unlock()
			return nil, s.target.Scrub(err)
		}
		if s.histories == nil {
			s.histories = map[dialects.Table]dialects.RunHistory{}
		}
		s.histories[t] = h
	}
	s.mu.Unlock()
	runs, err := h.Runs(ctx, name, n)
	return runs, s.target.Scrub(err)
}

func (s *exporterSource) ListLocks(ctx context.Context, opts dialects.ListOptions) (*dialects.Listing, error) {
	l, err := s.lister.ListLocks(ctx, opts)
	return l, s.target.Scrub(err)
}

func (s *exporterSource) Close() error { return s.backend.Close() }

var _ exporter.RunReader = (*exporterSource)(nil)
