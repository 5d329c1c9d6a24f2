package claimtable_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
	"github.com/schedlock/schedlock/dialects/dameng"
	"github.com/schedlock/schedlock/dialects/mysql"
	"github.com/schedlock/schedlock/dialects/oracle"
	"github.com/schedlock/schedlock/dialects/postgres"
	"github.com/schedlock/schedlock/dialects/sqlite"
	"github.com/schedlock/schedlock/dialects/sqlserver"
	"github.com/schedlock/schedlock/internal/fakesql"
	"github.com/schedlock/schedlock/internal/golden"
)

// recorder answers every statement of the engine with rows of the shape
// it reads, and records each statement with its bound values.
type recorder struct {
	mu    sync.Mutex
	out   strings.Builder
	extra int // rows beyond the batch a locking read returns
	fail  func(query string) error
}

func (r *recorder) note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(&r.out, "-- %s\n", s)
}

func taskRow(id int64, withUntil bool) []any {
	row := []any{id, "report", []byte("p"), int64(5), int64(1_700_000_000_000), int64(0), int64(3), int64(7), nil}
	if withUntil {
		row = append(row, int64(1_700_000_300_000))
	}
	return row
}

func (r *recorder) Handle(_ *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	r.mu.Lock()
	vals := make([]string, len(args))
	var maskBase int64
	for i, a := range args {
		switch v := a.Value.(type) {
		case []byte:
			vals[i] = fmt.Sprintf("0x%x", v)
		case int64:
			vals[i] = fmt.Sprint(v)
			if v >= 1<<62 { // a batch finish's random mask base (MySQL)
				if maskBase == 0 {
					maskBase = v
				}
				vals[i] = fmt.Sprintf("base+%#x", v-maskBase)
			}
		default:
			vals[i] = fmt.Sprint(a.Value)
		}
	}
	fmt.Fprintf(&r.out, "%s\n  args (%d): [%s]\n\n", q, len(args), strings.Join(vals, " "))
	r.mu.Unlock()
	if r.fail != nil {
		if err := r.fail(q); err != nil {
			return fakesql.Response{}, err
		}
	}
	pairs := int64(strings.Count(q, " AND version = "))
	up := strings.ToUpper(strings.TrimSpace(q))
	finish := strings.Contains(q, " = NULL, version = version + 1") || strings.Contains(q, " = NULL,\n  version = version + 1")
	switch {
	case finish && strings.Contains(q, "LAST_INSERT_ID"): // every row changed, reported in the mask
		return fakesql.Response{RowsAffected: pairs, LastInsertID: maskBase + 1<<pairs - 1}, nil
	case finish && (strings.Contains(q, "RETURNING") || strings.Contains(q, "OUTPUT ")),
		strings.HasPrefix(q, "SELECT id FROM ") && strings.HasSuffix(q, " FOR UPDATE"): // every row changed, or locked
		rows := [][]any{}
		for i := int64(1); i <= pairs; i++ {
			rows = append(rows, []any{i})
		}
		return fakesql.Response{Columns: cols(1), Rows: rows}, nil
	case strings.Contains(q, "RETURNING") || strings.Contains(q, "OUTPUT "):
		return fakesql.Response{Columns: cols(9), Rows: [][]any{taskRow(1, false), taskRow(2, false)}}, nil
	case !strings.HasPrefix(up, "SELECT"):
		return fakesql.Response{RowsAffected: max(1, pairs)}, nil
	case strings.Contains(q, "SKIP LOCKED") || strings.Contains(q, "READPAST"):
		rows := [][]any{}
		for i := int64(1); i <= 2+int64(r.extra); i++ {
			rows = append(rows, taskRow(i, true))
		}
		return fakesql.Response{Columns: cols(10), Rows: rows}, nil
	case strings.Contains(q, " id, version FROM ") || strings.HasPrefix(q, "SELECT c1, c2 FROM (SELECT id c1, version c2 "):
		return fakesql.Response{Columns: cols(2), Rows: [][]any{{int64(1), int64(6)}, {int64(2), int64(6)}}}, nil
	case strings.HasPrefix(q, "SELECT COUNT(*), MIN(status) FROM "):
		return fakesql.Response{Columns: cols(2), Rows: [][]any{{int64(2), "queued"}}}, nil
	case strings.Contains(q, " WHERE status IN ("): // the listing: a row the CASE calls claimed
		return fakesql.Response{Columns: cols(9), Rows: [][]any{{int64(1), "report", int64(1), "w1", int64(1_700_000_000_000), int64(1_700_000_300_000), int64(0), int64(3), int64(1_700_000_400_000)}}}, nil
	default: // the optimistic read-back
		rows := [][]any{}
		for i := int64(1); i <= pairs; i++ {
			rows = append(rows, taskRow(i, false))
		}
		return fakesql.Response{Columns: cols(9), Rows: rows}, nil
	}
}

func (r *recorder) Close(*fakesql.Session) {}

func cols(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("c%d", i+1)
	}
	return out
}

// dialectsUnderTest are every claim builder, as its backend gives it.
var dialectsUnderTest = []struct {
	file string
	b    claimtable.Builder
}{
	{"postgres", postgres.ClaimBuilder{}},
	{"mysql", mysql.ClaimBuilder{}},
	{"sqlite", sqlite.ClaimBuilder{}},
	{"oracle", oracle.ClaimBuilder{}},
	{"sqlserver", sqlserver.ClaimBuilder{}},
	{"sqlserver-rcsi", sqlserver.ClaimBuilder{RCSI: true}},
	{"dameng", dameng.ClaimBuilder{}},
}

// mappedTable is a user's table with the required roles only (under the
// default names, which the recorder recognises) and status values of its
// own.
var mappedTable = claimtable.Table{
	Name: "t_order",
	Columns: claimtable.Columns{ID: "id", Status: "status", DueAt: "due_at", Retries: "retries",
		Owner: "owner", ClaimedUntil: "claimed_until", Version: "version"},
	Statuses: claimtable.Statuses{Ready: "WAIT", Claimed: "RUNNING", Done: "DONE", Failed: "FAILED"},
}

// TestGoldenSQL records every statement the engine sends, per dialect and
// strategy, through the fake driver, against testdata/<dialect>-<strategy>.golden;
// and the same on mappedTable against <dialect>-<strategy>-mapped.golden.
func TestGoldenSQL(t *testing.T) {
	for _, d := range dialectsUnderTest {
		b := d.b
		for _, strategy := range b.Strategies() {
			t.Run(d.file+"-"+string(strategy), func(t *testing.T) {
				goldenRun(t, b, strategy, claimtable.Table{}, filepath.Join("testdata", d.file+"-"+string(strategy)+".golden"))
			})
			t.Run(d.file+"-"+string(strategy)+"-mapped", func(t *testing.T) {
				text := goldenRun(t, b, strategy, mappedTable, filepath.Join("testdata", d.file+"-"+string(strategy)+"-mapped.golden"))
				for _, stmt := range strings.Split(text, "\n\n") {
					if strings.HasPrefix(strings.TrimSpace(stmt), "--") && !strings.Contains(stmt, "\n") {
						continue
					}
					sql, _, _ := strings.Cut(stmt, "\n  args (")
					for _, word := range []string{"WAIT", "RUNNING", "DONE", "FAILED", "task_type", "payload", "priority", "max_retries", "updated_at"} {
						if strings.Contains(sql, word) {
							t.Errorf("a statement on a table without optional columns names %s:\n%s", word, sql)
						}
					}
				}
			})
		}
	}
}

// goldenRun drives every operation of the engine on table through the
// fake driver, checks the statements against the golden file and returns
// them.
func goldenRun(t *testing.T, b claimtable.Builder, strategy dialects.ClaimStrategy, table claimtable.Table, file string) string {
	t.Helper()
	rec := &recorder{}
	db, _ := fakesql.Open(rec)
	t.Cleanup(func() { _ = db.Close() })
	cl, err := claimtable.New(db, b, table, strategy, claimtable.Options{Lease: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rec.note("claim: up to 2 rows of type report for w1")
	tasks, err := cl.Claim(ctx, claimtable.Request{Owner: "w1", Max: 2, Type: "report"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2 || tasks[0].Owner != "w1" {
		t.Fatalf("claimed %+v; want 2 tasks of w1", tasks)
	}
	rec.note("complete")
	must(t, cl.Complete(ctx, &tasks[0]))
	rec.note("fail (back-off 1s)")
	must(t, cl.Fail(ctx, &tasks[1]))
	rec.note("give back")
	must(t, cl.GiveBack(ctx, &tasks[1]))
	rec.note("finish 3 rows: complete, fail (second failure), give back")
	batch := []claimtable.Finished{
		{Task: &claimtable.Task{ID: 1, Owner: "w1", Version: 7}, Outcome: claimtable.Completed},
		{Task: &claimtable.Task{ID: 2, Owner: "w1", Version: 7, Retries: 1}, Outcome: claimtable.Failed},
		{Task: &claimtable.Task{ID: 3, Owner: "w1", Version: 7}, Outcome: claimtable.GivenBack},
	}
	if notClaimed, err := cl.FinishMany(ctx, batch); err != nil || len(notClaimed) != 0 {
		t.Fatalf("FinishMany: not claimed %v, %v; want every row finished", notClaimed, err)
	}
	rec.note("finish 2 rows, both complete")
	if notClaimed, err := cl.FinishMany(ctx, batch[:1:1]); err != nil || len(notClaimed) != 0 {
		t.Fatalf("FinishMany: not claimed %v, %v; want every row finished", notClaimed, err)
	}
	rec.note("extend by 10m")
	must(t, cl.Extend(ctx, &tasks[1], 10*time.Minute))
	rec.note("release w1's overdue rows")
	_, err = cl.ReleaseOwner(ctx, "w1", claimtable.ReleaseOptions{})
	must(t, err)
	rec.note("release w1's rows, forced")
	_, err = cl.ReleaseOwner(ctx, "w1", claimtable.ReleaseOptions{Force: true})
	must(t, err)
	rec.note("list w1's rows")
	l, err := cl.List(ctx, claimtable.ListOptions{Owner: "w1"})
	must(t, err)
	if len(l.Rows) != 1 || l.Rows[0].State != claimtable.StateOverdue {
		t.Fatalf("listing %+v; want one overdue row", l.Rows)
	}
	rec.note("count the rows of other status values")
	if n, least, err := cl.Unmapped(ctx); err != nil || n != 2 || least != "queued" {
		t.Fatalf("Unmapped: %d, %q, %v; want the 2 rows of status queued the fake returns", n, least, err)
	}
	rec.note("add 2 tasks")
	must(t, cl.Add(ctx, claimtable.NewTask{Type: "report", Payload: []byte("a")}, claimtable.NewTask{Type: "mail", Priority: 9, Delay: time.Minute}))
	if table.Columns == (claimtable.Columns{}) {
		rec.note("create the default table")
		must(t, cl.CreateTable(ctx))
		rec.note("drop it")
		must(t, cl.DropTable(ctx))
	} else if err := cl.CreateTable(ctx); !errors.Is(err, dialects.ErrInvalid) {
		t.Fatalf("CreateTable of a mapped table: %v; want ErrInvalid", err)
	}
	golden.Check(t, file, rec.out.String())
	return rec.out.String()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestLockWithoutLimitReadsOnlyTheBatch: where a locking read has no row
// limit (Oracle, Dameng), the engine reads only the rows it asked for and
// claims exactly those.
func TestLockWithoutLimitReadsOnlyTheBatch(t *testing.T) {
	for _, b := range []claimtable.Builder{oracle.ClaimBuilder{}, dameng.ClaimBuilder{}} {
		rec := &recorder{extra: 3}
		db, log := fakesql.Open(rec)
		cl, err := claimtable.New(db, b, claimtable.Table{}, dialects.ClaimSkipLocked, claimtable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		tasks, err := cl.Claim(context.Background(), claimtable.Request{Owner: "w", Max: 2})
		if err != nil || len(tasks) != 2 {
			t.Fatalf("%s: claimed %d, %v; want the 2 asked for of the 5 returned", fmt.Sprintf("%T", b), len(tasks), err)
		}
		stmts := log.Statements()
		// The update binds the claimed status, the owner and the lease, then the ids.
		if last := stmts[len(stmts)-1]; !strings.HasSuffix(last, "IN ("+b.Param(4, claimtable.KindInt)+", "+b.Param(5, claimtable.KindInt)+")") {
			t.Fatalf("%s: the update must name the 2 rows claimed: %s", fmt.Sprintf("%T", b), last)
		}
		_ = db.Close()
	}
}

// TestParameterLimitSplitsStatements: an optimistic claim of 2,300 rows
// on SQL Server sends no statement with more than 2,100 parameters.
func TestParameterLimitSplitsStatements(t *testing.T) {
	var b claimtable.Builder = sqlserver.ClaimBuilder{}
	var mu sync.Mutex
	most := 0
	h := &paramCounter{most: &most, mu: &mu, n: 2300}
	db, _ := fakesql.Open(h)
	defer db.Close()
	cl, err := claimtable.New(db, b, claimtable.Table{}, dialects.ClaimOptimistic, claimtable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := cl.Claim(context.Background(), claimtable.Request{Owner: "w", Max: 2300})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2300 {
		t.Fatalf("claimed %d; want 2300", len(tasks))
	}
	if most > 2100 {
		t.Fatalf("a statement had %d parameters; SQL Server takes 2,100", most)
	}
	if _, err := cl.Claim(context.Background(), claimtable.Request{Owner: "w", Max: claimtable.MaxBatch + 1}); err == nil {
		t.Fatal("a batch above the limit was accepted")
	}
}

// paramCounter answers an optimistic claim of n rows and notes the most
// parameters one statement had.
type paramCounter struct {
	mu   *sync.Mutex
	most *int
	n    int
}

func (p *paramCounter) Handle(_ *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	p.mu.Lock()
	*p.most = max(*p.most, len(args))
	p.mu.Unlock()
	pairs := strings.Count(q, " AND version = ")
	switch {
	case strings.Contains(q, " id, version FROM "):
		rows := make([][]any, p.n)
		for i := range rows {
			rows[i] = []any{int64(i + 1), int64(0)}
		}
		return fakesql.Response{Columns: cols(2), Rows: rows}, nil
	case strings.HasPrefix(q, "UPDATE"):
		return fakesql.Response{RowsAffected: int64(pairs)}, nil
	}
	rows := make([][]any, pairs)
	for i := range rows {
		rows[i] = taskRow(int64(i+1), false)
	}
	return fakesql.Response{Columns: cols(9), Rows: rows}, nil
}

func (p *paramCounter) Close(*fakesql.Session) {}
