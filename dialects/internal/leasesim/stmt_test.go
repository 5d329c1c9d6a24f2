package leasesim

import (
	"database/sql/driver"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

func bound(v ...any) []driver.NamedValue {
	out := make([]driver.NamedValue, len(v))
	for i := range v {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v[i]}
	}
	return out
}

// leaseTable is a schedlock-preset table with a live row "live" owned by
// a (token 4) and an ended row "ended" owned by a (token 2).
func leaseTable(t *testing.T, now time.Time) *Table {
	t.Helper()
	s, err := dialects.Table{Preset: dialects.PresetSchedlock}.Schema()
	if err != nil {
		t.Fatal(err)
	}
	return &Table{Schema: s, Rows: map[string]*Row{
		"live":  {Name: "live", Owner: "a", LockedAt: now.Add(-time.Second), Until: now.Add(time.Minute), Token: 4},
		"ended": {Name: "ended", Owner: "a", LockedAt: now.Add(-time.Minute), Until: now, Token: 2},
	}}
}

func TestEvalPostgresAndSQLServerForms(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 678_900_000, time.UTC)
	env := Env{
		Func: func(name string, _ []any) (any, bool, error) {
			return now, name == "CLOCK_TIMESTAMP", nil
		},
		Placeholder: Bound(bound(int64(1500))),
	}
	for expr, want := range map[string]any{
		"date_trunc('milliseconds', clock_timestamp() AT TIME ZONE 'UTC')": now.Truncate(time.Millisecond),
		"$1::bigint * interval '1 millisecond'":                            1500 * time.Millisecond,
		"interval '2 seconds' * 3":                                         6 * time.Second,
		"clock_timestamp() + interval '1 minute'":                          now.Add(time.Minute),
		"CAST('2026-11-01T06:00:00.000' AS datetime2(3))":                  time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC),
	} {
		got, err := Eval(expr, env)
		if err != nil || got != want {
			t.Errorf("Eval(%q) = %v, %v; want %v", expr, got, err, want)
		}
	}
	for _, bad := range []string{"clock_timestamp() AT TIME ZONE 'Europe/Paris'", "interval '1 fortnight'", "date_trunc('week', clock_timestamp())"} {
		if _, err := Eval(bad, env); err == nil {
			t.Errorf("Eval(%q): no error", bad)
		}
	}
}

// sqlServerEnv is SQL Server's: SYSUTCDATETIME() is now, @pn are bound.
func sqlServerEnv(now time.Time, args ...any) Env {
	return Env{
		Placeholder: Bound(bound(args...)),
		Func: func(name string, _ []any) (any, bool, error) {
			return now, name == "SYSUTCDATETIME", nil
		},
		IntDiv: true,
	}
}

func TestExecSQLServer(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	const clock = "(SELECT CAST(SYSUTCDATETIME() AS datetime2(3)) AS now) AS n"
	plus := func(base string) string {
		return "DATEADD(millisecond, CAST(@p3 % 86400000 AS int), DATEADD(day, CAST(@p3 / 86400000 AS int), " + base + "))"
	}
	merge := "MERGE INTO schedlock WITH (HOLDLOCK) AS t\n" +
		"USING (SELECT @p1 AS name, @p2 AS owner, n.now, " + plus("n.now") + " AS until FROM " + clock + ") AS src\n" +
		"ON t.name = src.name\n" +
		"WHEN MATCHED AND t.lock_until <= src.now THEN UPDATE SET locked_by = src.owner, locked_at = src.now, lock_until = src.until, token = t.token + 1\n" +
		"WHEN NOT MATCHED THEN INSERT (name, locked_by, locked_at, lock_until, token) VALUES (src.name, src.owner, src.now, src.until, 1)\n" +
		"OUTPUT inserted.token;"
	tbl := leaseTable(t, now)
	for _, c := range []struct {
		name    string
		matched bool
		out     any // the OUTPUT of the changed or inserted row; nil for none
	}{
		{"live", true, nil},
		{"ended", true, int64(3)},
		{"new", false, int64(1)},
	} {
		env := sqlServerEnv(now, c.name, "b", int64(90_000_000)) // a day and a quarter
		res, err := tbl.Exec(merge, env)
		if err != nil {
			t.Fatal(err)
		}
		if res.Matched != c.matched {
			t.Errorf("%s: matched %v", c.name, res.Matched)
		}
		var out any
		switch {
		case res.Insert != nil:
			tbl.Rows[res.Insert.Name] = res.Insert
			out, err = tbl.Output(res, res.Insert, env)
		case len(res.Rows) == 1:
			out, err = tbl.Output(res, res.Rows[0], env)
		}
		if err != nil || out != c.out {
			t.Errorf("%s: OUTPUT %v, %v; want %v", c.name, out, err, c.out)
		}
	}
	if r := tbl.Rows["new"]; r == nil || r.Owner != "b" || !r.Until.Equal(now.Add(25*time.Hour)) || !r.LockedAt.Equal(now) {
		t.Errorf("inserted %+v", r)
	}
	if r := tbl.Rows["live"]; r.Owner != "a" {
		t.Errorf("a live row was taken over: %+v", r)
	}

	refresh := "UPDATE t SET lock_until = " + plus("n.now") + "\nOUTPUT inserted.token\nFROM schedlock AS t CROSS JOIN " + clock +
		"\nWHERE t.name = @p1 AND t.locked_by = @p2 AND (t.token = @p4 OR @p4 = 0) AND t.lock_until > n.now;"
	for _, c := range []struct {
		owner string
		token int64
		n     int64
	}{{"b", 0, 0}, {"a", 3, 0}, {"a", 4, 1}, {"a", 0, 1}} {
		res, err := tbl.Exec(refresh, sqlServerEnv(now, "live", c.owner, int64(5000), c.token))
		if err != nil || res.Affected() != c.n {
			t.Errorf("refresh by %s with token %d: %d rows, %v; want %d", c.owner, c.token, res.Affected(), err, c.n)
		}
	}
	if got := tbl.Rows["live"].Until; !got.Equal(now.Add(5 * time.Second)) {
		t.Errorf("refreshed until %v", got)
	}
	del := "DELETE t\nOUTPUT CAST(1 AS bigint)\nFROM schedlock AS t CROSS JOIN " + clock + "\nWHERE t.name = @p1 AND t.locked_by = @p2 AND t.lock_until <= n.now;"
	res, err := tbl.Exec(del, sqlServerEnv(now, "live", "a"))
	if err != nil || res.Affected() != 0 || tbl.Rows["live"] == nil {
		t.Errorf("sweep of a live row: %d, %v", res.Affected(), err)
	}
	tbl.Rows["live"].Until = now
	res, err = tbl.Exec(del, sqlServerEnv(now, "live", "a"))
	if err != nil || res.Affected() != 1 || tbl.Rows["live"] != nil {
		t.Fatalf("sweep of an ended row: %d, %v", res.Affected(), err)
	}
	if out, err := tbl.Output(res, res.Rows[0], sqlServerEnv(now)); err != nil || out != int64(1) {
		t.Errorf("DELETE OUTPUT %v, %v", out, err)
	}
	for _, bad := range []string{
		strings.Replace(refresh, "FROM schedlock", "FROM shedlock", 1),               // another table
		strings.Replace(refresh, "UPDATE t SET", "UPDATE x SET", 1),                  // not the FROM's alias
		strings.Replace(refresh, "lock_until = DATEADD", "lock_until <> DATEADD", 1), // a comparison as assignment
		strings.Replace(del, clock, "(SELECT now FROM clocks) AS n", 1),              // a derived table reading a table
	} {
		if _, err := tbl.Exec(bad, sqlServerEnv(now, "x", "a", int64(1), int64(0))); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}

// pgEnv is PostgreSQL's: clock_timestamp() is now, $n are bound.
func pgEnv(now time.Time, args ...any) Env {
	return Env{
		Placeholder: Bound(bound(args...)),
		Func: func(name string, _ []any) (any, bool, error) {
			return now, name == "CLOCK_TIMESTAMP", nil
		},
	}
}

func TestExecPostgres(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	const clock = "date_trunc('milliseconds', clock_timestamp() AT TIME ZONE 'UTC')"
	upsert := "INSERT INTO schedlock AS t (name, locked_by, locked_at, lock_until, token)\n" +
		"SELECT $1::text, $2::text, n.now, n.now + $3::bigint * interval '1 millisecond', 1\n" +
		"FROM (SELECT " + clock + " AS now) AS n\n" +
		"ON CONFLICT (name) DO UPDATE SET locked_by = EXCLUDED.locked_by, locked_at = EXCLUDED.locked_at, lock_until = EXCLUDED.lock_until, token = t.token + 1\n" +
		"WHERE t.lock_until <= " + clock + "\nRETURNING t.token"
	duplicate := "INSERT INTO schedlock (name, locked_by, locked_at, lock_until, token)\n" +
		"SELECT $1::text, $2::text, n.now, n.now + $3::bigint * interval '1 millisecond', 1\n" +
		"FROM (SELECT " + clock + " AS now) AS n\n" +
		"ON DUPLICATE KEY UPDATE locked_by = EXCLUDED.locked_by, locked_at = EXCLUDED.locked_at, lock_until = EXCLUDED.lock_until, token = token + 1\n" +
		"WHERE lock_until <= " + clock
	for _, sql := range []string{upsert, duplicate} {
		tbl := leaseTable(t, now)
		for _, c := range []struct {
			name    string
			matched bool
			changed int64
			token   int64
		}{{"live", true, 0, 4}, {"ended", true, 1, 3}, {"new", false, 1, 1}} {
			env := pgEnv(now, c.name, "b", int64(30_000))
			res, err := tbl.Exec(sql, env)
			if err != nil {
				t.Fatal(err)
			}
			if res.Insert != nil {
				tbl.Rows[res.Insert.Name] = res.Insert
			}
			if res.Matched != c.matched || res.Affected() != c.changed || tbl.Rows[c.name].Token != c.token {
				t.Errorf("%s: %+v, row %+v", c.name, res, tbl.Rows[c.name])
			}
			if c.changed == 1 && (tbl.Rows[c.name].Owner != "b" || !tbl.Rows[c.name].Until.Equal(now.Add(30*time.Second))) {
				t.Errorf("%s: row %+v", c.name, tbl.Rows[c.name])
			}
			if sql == upsert && res.Insert != nil {
				if out, err := tbl.Output(res, res.Insert, env); err != nil || out != int64(1) {
					t.Errorf("RETURNING %v, %v", out, err)
				}
			}
		}
	}

	tbl := leaseTable(t, now)
	release := "UPDATE schedlock AS t SET lock_until = GREATEST(t.locked_at + $3::bigint * interval '1 millisecond', " + clock + ")\n" +
		"WHERE t.name = $1::text AND t.locked_by = $2::text AND (t.token = $4::bigint OR $4::bigint = 0) AND t.lock_until > " + clock + "\nRETURNING t.token"
	res, err := tbl.Exec(release, pgEnv(now, "live", "a", int64(10_000), int64(4)))
	if err != nil || res.Affected() != 1 || !tbl.Rows["live"].Until.Equal(now.Add(9*time.Second)) {
		t.Fatalf("release: %+v, %v, row %+v", res, err, tbl.Rows["live"])
	}
	if out, err := tbl.Output(res, res.Rows[0], pgEnv(now)); err != nil || out != int64(4) {
		t.Errorf("RETURNING %v, %v", out, err)
	}
	del := "DELETE FROM schedlock AS t\nWHERE t.name = $1::text AND t.locked_by = $2::text AND t.lock_until <= " + clock + "\nRETURNING 1::bigint"
	if res, err := tbl.Exec(del, pgEnv(now, "ended", "a")); err != nil || res.Affected() != 1 || tbl.Rows["ended"] != nil {
		t.Errorf("sweep: %+v, %v", res, err)
	}
	if _, err := tbl.Exec(strings.Replace(upsert, "ON CONFLICT (name)", "ON CONFLICT (locked_by)", 1), pgEnv(now, "x", "b", int64(1))); err == nil {
		t.Error("a conflict target that is not the key: no error")
	}
}
