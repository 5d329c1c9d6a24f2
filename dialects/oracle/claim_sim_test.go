package oracle

import (
	"context"
	"database/sql/driver"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
	"github.com/schedlock/schedlock/dialects/internal/oralike/oraliketest"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// claimDDLSim plays the schema side of an Oracle server of a given
// version in front of oraSim (which answers detection): it parses the
// DDL the claim engine sends, as the server's parser and dictionary
// would take it, and the INSERTs of Add, so that creating and filling the
// task table is proved per version without a server:
//
//   - CREATE TABLE (in or out of a PL/SQL block that ignores one SQLCODE):
//     an identity clause (GENERATED … AS IDENTITY) before 12.1 is a syntax
//     error, ORA-00907 missing right parenthesis, as identity columns
//     arrived in 12c; names longer than 30 bytes before 12.2 are
//     ORA-00972; a name in use (tables and sequences share one namespace)
//     is ORA-00955;
//   - CREATE SEQUENCE; CREATE [OR REPLACE] TRIGGER … BEFORE INSERT … FOR
//     EACH ROW WHEN (new.c IS NULL) BEGIN SELECT s.NEXTVAL INTO :new.c
//     FROM dual; END; (the table must exist, ORA-00942; a missing sequence
//     leaves the trigger invalid: ORA-24344 at creation and ORA-04098 on
//     every insert); CREATE INDEX (every column must exist, ORA-00904);
//     DROP TABLE … PURGE (its triggers and indexes go with it); DROP
//     SEQUENCE (ORA-02289 when there is none);
//   - INSERT INTO t (cols) VALUES (…): a column left out takes its
//     identity value, else its DEFAULT, then BEFORE INSERT triggers run;
//     a NOT NULL column still NULL is ORA-01400;
//   - SELECT * FROM t WHERE 1 = 0: the columns, upper case.
type claimDDLSim struct {
	*oraSim
	major, minor int

	mu       sync.Mutex
	tables   map[string]*ddlTable
	seqs     map[string]int64 // last value given; 0: none yet
	triggers map[string]ddlTrigger
	indexes  map[string]string // index → table
	known    int               // statements this layer answered
}

type ddlTable struct {
	cols []ddlColumn
	rows []map[string]any
	ids  int64 // the identity's last value
}

type ddlColumn struct {
	name     string
	notNull  bool
	identity bool
	def      string // DEFAULT expression, "" none
}

type ddlTrigger struct {
	table, col, seq string
	valid           bool
}

func newClaimDDLSim(t *testing.T, cfg simConfig) *claimDDLSim {
	var major, minor int
	if _, err := fmt.Sscanf(cfg.Version, "%d.%d", &major, &minor); err != nil {
		t.Fatalf("version %q: %v", cfg.Version, err)
	}
	return &claimDDLSim{oraSim: newSim(t, cfg), major: major, minor: minor,
		tables: map[string]*ddlTable{}, seqs: map[string]int64{}, triggers: map[string]ddlTrigger{}, indexes: map[string]string{}}
}

var (
	plsqlBlockRE  = regexp.MustCompile(`(?s)^BEGIN\n  EXECUTE IMMEDIATE '([^']*)';\nEXCEPTION\n  WHEN OTHERS THEN\n    IF SQLCODE != -(\d+) THEN\n      RAISE;\n    END IF;\nEND;$`)
	createTableRE = regexp.MustCompile(`(?s)^CREATE TABLE (\S+) \((.*)\)$`)
	createSeqRE   = regexp.MustCompile(`^CREATE SEQUENCE (\S+)$`)
	createTrigRE  = regexp.MustCompile(`^CREATE (OR REPLACE )?TRIGGER (\S+) BEFORE INSERT ON (\S+) FOR EACH ROW WHEN \(new\.(\w+) IS NULL\) BEGIN SELECT (\S+)\.NEXTVAL INTO :new\.(\w+) FROM dual; END;$`)
	createIndexRE = regexp.MustCompile(`^CREATE INDEX (\S+) ON (\S+) \(([^)]*)\)$`)
	dropTableRE   = regexp.MustCompile(`^DROP TABLE (\S+) PURGE$`)
	dropSeqRE     = regexp.MustCompile(`^DROP SEQUENCE (\S+)$`)
	insertRE      = regexp.MustCompile(`(?s)^INSERT INTO (\S+) \(([^)]*)\) VALUES \((.*)\)$`)
	bindRE        = regexp.MustCompile(`^:(\d+)$`)
)

func (s *claimDDLSim) Handle(fs *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	return s.HandleContext(context.Background(), fs, q, args)
}

func (s *claimDDLSim) HandleContext(ctx context.Context, fs *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	ignore := 0
	stmt := q
	if m := plsqlBlockRE.FindStringSubmatch(q); m != nil {
		stmt = m[1]
		_, _ = fmt.Sscanf(m[2], "%d", &ignore)
	}
	s.Mu.Lock()
	resp, err, ok := s.statement(stmt, args)
	if ok {
		s.known++
	}
	s.Mu.Unlock()
	if !ok {
		return s.oraSim.HandleContext(ctx, fs, q, args)
	}
	if err != nil && ignore != 0 && oraCode(err) == ignore {
		return fakesql.Response{}, nil
	}
	return resp, err
}

func (s *claimDDLSim) before(major, minor int) bool {
	return s.major < major || s.major == major && s.minor < minor
}

// name checks an identifier (each part of schema.name) as the version's
// dictionary takes it.
func (s *claimDDLSim) name(n string) (string, error) {
	for _, part := range strings.Split(n, ".") {
		if s.before(12, 2) && len(part) > 30 {
			return "", oraErr(972, "identifier is too long")
		}
	}
	return strings.ToUpper(n), nil
}

func (s *claimDDLSim) inUse(n string) bool {
	_, t := s.tables[n]
	_, q := s.seqs[n]
	return t || q
}

// statement answers one statement this layer knows; ok is false for the
// others.
func (s *claimDDLSim) statement(q string, args []driver.NamedValue) (fakesql.Response, error, bool) {
	none := fakesql.Response{}
	if table, ok := oraliketest.ColumnsOf(q); ok {
		tbl := s.tables[strings.ToUpper(table)]
		if tbl == nil {
			return none, nil, false // oraSim's lock tables, or ORA-00942
		}
		var cols []string
		for _, c := range tbl.cols {
			cols = append(cols, c.name)
		}
		return fakesql.Response{Columns: cols}, nil, true
	}
	if m := createTableRE.FindStringSubmatch(q); m != nil {
		name, err := s.name(m[1])
		if err != nil {
			return none, err, true
		}
		tbl := &ddlTable{}
		for _, def := range splitTop(m[2]) {
			words := strings.Fields(def)
			up := strings.ToUpper(def)
			if strings.Contains(up, " GENERATED ") && s.before(12, 1) {
				return none, oraErr(907, "missing right parenthesis"), true
			}
			col, err := s.name(words[0])
			if err != nil {
				return none, err, true
			}
			c := ddlColumn{name: col, notNull: strings.Contains(up, "NOT NULL") || strings.Contains(up, "PRIMARY KEY"),
				identity: strings.Contains(up, " AS IDENTITY")}
			if i := strings.Index(up, " DEFAULT "); i >= 0 {
				c.def = strings.Fields(def[i+len(" DEFAULT "):])[0]
			}
			tbl.cols = append(tbl.cols, c)
		}
		if s.inUse(name) {
			return none, oraErr(oraNameInUse, "name is already used by an existing object"), true
		}
		s.tables[name] = tbl
		return none, nil, true
	}
	if m := createSeqRE.FindStringSubmatch(q); m != nil {
		name, err := s.name(m[1])
		if err != nil {
			return none, err, true
		}
		if s.inUse(name) {
			return none, oraErr(oraNameInUse, "name is already used by an existing object"), true
		}
		s.seqs[name] = 0
		return none, nil, true
	}
	if m := createTrigRE.FindStringSubmatch(q); m != nil {
		name, err := s.name(m[2])
		if err != nil {
			return none, err, true
		}
		table, _ := s.name(m[3])
		tbl := s.tables[table]
		if tbl == nil {
			return none, oraErr(oraNoSuchTable, "table or view does not exist"), true
		}
		if _, dup := s.triggers[name]; dup && m[1] == "" {
			return none, oraErr(4081, "trigger already exists"), true
		}
		col := strings.ToUpper(m[4])
		if !strings.EqualFold(m[4], m[6]) || !tbl.has(col) {
			return none, oraErr(4082, "NEW or OLD references not allowed here"), true
		}
		seq := strings.ToUpper(m[5])
		_, valid := s.seqs[seq]
		s.triggers[name] = ddlTrigger{table: table, col: col, seq: seq, valid: valid}
		if !valid {
			return none, oraErr(24344, "success with compilation error"), true
		}
		return none, nil, true
	}
	if m := createIndexRE.FindStringSubmatch(q); m != nil {
		name, err := s.name(m[1])
		if err != nil {
			return none, err, true
		}
		table, _ := s.name(m[2])
		tbl := s.tables[table]
		if tbl == nil {
			return none, oraErr(oraNoSuchTable, "table or view does not exist"), true
		}
		for _, c := range strings.Split(m[3], ",") {
			col := strings.ToUpper(strings.TrimSuffix(strings.TrimSpace(c), " DESC"))
			if !tbl.has(col) {
				return none, oraErr(904, fmt.Sprintf("%q: invalid identifier", col)), true
			}
		}
		if _, dup := s.indexes[name]; dup {
			return none, oraErr(oraNameInUse, "name is already used by an existing object"), true
		}
		s.indexes[name] = table
		return none, nil, true
	}
	if m := dropTableRE.FindStringSubmatch(q); m != nil {
		table := strings.ToUpper(m[1])
		if s.tables[table] == nil {
			return none, nil, false // a lock table of oraSim
		}
		delete(s.tables, table)
		for n, tr := range s.triggers {
			if tr.table == table {
				delete(s.triggers, n)
			}
		}
		for n, t := range s.indexes {
			if t == table {
				delete(s.indexes, n)
			}
		}
		return none, nil, true
	}
	if m := dropSeqRE.FindStringSubmatch(q); m != nil {
		seq := strings.ToUpper(m[1])
		if _, ok := s.seqs[seq]; !ok {
			return none, oraErr(oraNoSuchSequence, "sequence does not exist"), true
		}
		delete(s.seqs, seq)
		for n, tr := range s.triggers {
			if tr.seq == seq {
				tr.valid = false
				s.triggers[n] = tr
			}
		}
		return none, nil, true
	}
	if m := insertRE.FindStringSubmatch(q); m != nil {
		table := strings.ToUpper(m[1])
		tbl := s.tables[table]
		if tbl == nil {
			return none, oraErr(oraNoSuchTable, "table or view does not exist"), true
		}
		names := strings.Split(m[2], ",")
		values := splitTop(m[3])
		if len(names) != len(values) {
			return none, oraErr(913, "too many values"), true
		}
		row := map[string]any{}
		for i, n := range names {
			col := strings.ToUpper(strings.TrimSpace(n))
			if !tbl.has(col) {
				return none, oraErr(904, fmt.Sprintf("%q: invalid identifier", col)), true
			}
			v := any(strings.TrimSpace(values[i]))
			if p := bindRE.FindStringSubmatch(values[i]); p != nil {
				var k int
				_, _ = fmt.Sscanf(p[1], "%d", &k)
				if k < 1 || k > len(args) {
					return none, oraErr(1008, "not all variables bound"), true
				}
				v = args[k-1].Value
			}
			row[col] = v
		}
		for _, c := range tbl.cols {
			if _, given := row[c.name]; given {
				continue
			}
			switch {
			case c.identity:
				tbl.ids++
				row[c.name] = tbl.ids
			case c.def != "":
				row[c.name] = c.def
			}
		}
		for _, tr := range s.triggers {
			if tr.table != table {
				continue
			}
			if !tr.valid {
				return none, oraErr(4098, "trigger is invalid and failed re-validation"), true
			}
			if row[tr.col] == nil {
				s.seqs[tr.seq]++
				row[tr.col] = s.seqs[tr.seq]
			}
		}
		for _, c := range tbl.cols {
			if c.notNull && row[c.name] == nil {
				return none, oraErr(1400, fmt.Sprintf("cannot insert NULL into (%q.%q.%q)", s.cfg.User, table, c.name)), true
			}
		}
		tbl.rows = append(tbl.rows, row)
		return fakesql.Response{RowsAffected: 1}, nil, true
	}
	return none, nil, false
}

func (t *ddlTable) has(col string) bool {
	for _, c := range t.cols {
		if c.name == col {
			return true
		}
	}
	return false
}

// splitTop splits a list at the commas outside parentheses and quotes.
func splitTop(s string) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	for i, r := range s {
		switch {
		case r == '\'':
			quoted = !quoted
		case quoted:
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// ids are the id column's values of table's rows, in insert order.
func (s *claimDDLSim) ids(table, col string) []any {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	var out []any
	if tbl := s.tables[strings.ToUpper(table)]; tbl != nil {
		for _, r := range tbl.rows {
			out = append(out, r[strings.ToUpper(col)])
		}
	}
	return out
}

// objects counts the tables, sequences, triggers and indexes there are.
func (s *claimDDLSim) objects() int {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return len(s.tables) + len(s.seqs) + len(s.triggers) + len(s.indexes)
}

// config11g is an 11g Release 2 Express Edition with every grant.
func config11g() simConfig {
	return simConfig{
		Product: "Oracle Database 11g Express Edition ",
		Version: "11.2.0.2.0",
		Banner:  "Oracle Database 11g Express Edition Release 11.2.0.2.0 - 64bit Production",
		User:    "APP",
	}
}

// config121 is 12c Release 1: identity columns, names of 30 bytes.
func config121() simConfig {
	return simConfig{
		Product: "Oracle Database 12c Enterprise Edition ",
		Version: "12.1.0.2.0",
		Banner:  "Oracle Database 12c Enterprise Edition Release 12.1.0.2.0 - 64bit Production",
		User:    "APP",
	}
}

// TestClaimTableOnEveryVersion: the default task table, its sequence,
// trigger and index are created on simulated 11g Release 2, 12.1 and 19c
// servers (twice: the second time changes nothing), have the columns the
// claimer checks, fill the id of every row Add inserts from the sequence
// (1, 2, 3), and are dropped with nothing left behind.
func TestClaimTableOnEveryVersion(t *testing.T) {
	for _, cfg := range []simConfig{config11g(), config121(), config19c()} {
		t.Run(cfg.Version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			sim := newClaimDDLSim(t, cfg)
			sqlDB, _ := fakesql.Open(sim)
			t.Cleanup(func() { _ = sqlDB.Close() })
			db, err := New(ctx, sqlDB, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(db.Info.Version, strings.SplitN(cfg.Version, ".", 2)[0]+".") {
				t.Fatalf("detected %q; want %q", db.Info.Version, cfg.Version)
			}
			for _, table := range []string{"", "sl_claims_0a1b2c3d_12"} { // the default, and selfcheck's longest
				cl, err := claimtable.Open(ctx, db, claimtable.Table{Name: table}, claimtable.Options{Strategy: dialects.ClaimSkipLocked})
				if err != nil {
					t.Fatal(err)
				}
				for range 2 {
					if err := cl.CreateTable(ctx); err != nil {
						t.Fatalf("create %s: %v", cl.Table().Name, err)
					}
				}
				if err := cl.CheckColumns(ctx, claimtable.ReadColumns(db)); err != nil {
					t.Fatalf("the created table: %v", err)
				}
				if err := cl.Add(ctx, claimtable.NewTask{Type: "a"}, claimtable.NewTask{Type: "b"}, claimtable.NewTask{Type: "c", Delay: time.Minute}); err != nil {
					t.Fatalf("add: %v", err)
				}
				if got := fmt.Sprint(sim.ids(cl.Table().Name, "id")); got != "[1 2 3]" {
					t.Fatalf("ids of the added rows: %s; want [1 2 3] from the sequence", got)
				}
				if err := cl.DropTable(ctx); err != nil {
					t.Fatalf("drop: %v", err)
				}
				if n := sim.objects(); n != 0 {
					t.Fatalf("%d objects left after DropTable", n)
				}
			}
			sim.AssertUnderstood(t)
		})
	}
}

// TestClaimDDLSimRefuses: the simulator refuses what the servers refuse,
// so the test above could fail: 11g rejects an identity column (the
// table's former DDL) and a name above 30 bytes, and an insert that
// leaves a NOT NULL id to nobody is ORA-01400.
func TestClaimDDLSimRefuses(t *testing.T) {
	identity := ignoreNameInUse("CREATE TABLE t1 (id NUMBER(19) GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, status VARCHAR2(32 CHAR) NOT NULL)")
	for _, tc := range []struct {
		cfg   simConfig
		stmts []string
		code  int
	}{
		{config11g(), []string{identity}, 907},
		{config121(), []string{identity, "INSERT INTO t1 (status) VALUES (:1)"}, 0},
		{config121(), []string{"CREATE SEQUENCE a_name_of_thirty_one_bytes_seq1"}, 972},
		{config11g(), []string{"CREATE TABLE t2 (id NUMBER(19) PRIMARY KEY, status VARCHAR2(32 CHAR) NOT NULL)", "INSERT INTO t2 (status) VALUES (:1)"}, 1400},
		{config11g(), []string{"CREATE TABLE t3 (id NUMBER(19) PRIMARY KEY)", "CREATE OR REPLACE TRIGGER t3_bi BEFORE INSERT ON t3 FOR EACH ROW WHEN (new.id IS NULL) BEGIN SELECT t3_seq.NEXTVAL INTO :new.id FROM dual; END;"}, 24344},
		{config19c(), []string{"DROP SEQUENCE t4_seq"}, oraNoSuchSequence},
	} {
		sim := newClaimDDLSim(t, tc.cfg)
		sqlDB, _ := fakesql.Open(sim)
		var err error
		for _, stmt := range tc.stmts {
			if _, err = sqlDB.Exec(stmt, "ready"); err != nil {
				break
			}
		}
		if oraCode(err) != tc.code || tc.code == 0 && err != nil {
			t.Errorf("%s on %s: %v; want ORA-%05d", tc.stmts, tc.cfg.Version, err, tc.code)
		}
		_ = sqlDB.Close()
	}
}
