package leasesim

import (
	"database/sql/driver"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

func TestCond(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	env := Env{
		Ident: func(name string) (any, bool) {
			switch name {
			case "until":
				return now.Add(time.Second), true
			case "owner":
				return "me", true
			case "now":
				return now, true
			}
			return nil, false
		},
		Placeholder: Bound([]driver.NamedValue{{Ordinal: 1, Value: "me"}, {Ordinal: 2, Value: int64(0)}}),
	}
	for cond, want := range map[string]bool{
		"until > now":                true,
		"until <= now":               false,
		"owner = :1":                 true,
		"owner <> :1":                false,
		"(owner = 'x' OR :2 = 0)":    true,
		"NOT (until > now) OR 1 = 0": false,
		"NULL = NULL":                false,
		"CASE WHEN until > now THEN 1 ELSE 0 END = 1":                 true,
		"until - NUMTODSINTERVAL(1000 / 1000, 'SECOND') <= now":       true,
		"GREATEST(until, now) = until":                                true,
		"DATEADD(millisecond, CAST(1500 % 1000 AS int), now) < until": true,
		"owner IN ('x', :1)":                                          true,
		"owner IN ('x', 'y')":                                         false,
		"(owner IN ('x', NULL)) IS NULL":                              true,
		":2 IN (1, 2, 0)":                                             true,
	} {
		got, err := Cond(cond, env)
		if err != nil || got != want {
			t.Errorf("Cond(%q) = %v, %v; want %v", cond, got, err, want)
		}
	}
	for _, bad := range []string{"until >", "until ! now", "owner = :3", "nosuch = 1", "until + 1"} {
		if _, err := Cond(bad, env); err == nil {
			t.Errorf("Cond(%q): no error", bad)
		}
	}
}

func TestTableMergeAndUpdate(t *testing.T) {
	s, err := dialects.Table{Preset: dialects.PresetShedlock}.Schema()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	tbl := &Table{Schema: s, Rows: map[string]*Row{
		"live":  {Name: "live", Owner: "a", LockedAt: now, Until: now.Add(time.Minute)},
		"ended": {Name: "ended", Owner: "a", LockedAt: now.Add(-time.Minute), Until: now},
	}}
	args := func(v ...any) []driver.NamedValue {
		out := make([]driver.NamedValue, len(v))
		for i := range v {
			out[i] = driver.NamedValue{Ordinal: i + 1, Value: v[i]}
		}
		return out
	}
	merge := "MERGE INTO shedlock t USING (SELECT ? AS new_name, ? AS new_owner, ? AS at_most_ms FROM dual) s ON (t.name = s.new_name)" +
		" WHEN MATCHED THEN UPDATE SET t.locked_by = s.new_owner, t.lock_until = SYSTIMESTAMP + NUMTODSINTERVAL(s.at_most_ms / 1000, 'SECOND')" +
		" WHERE t.lock_until <= SYSTIMESTAMP WHEN NOT MATCHED THEN INSERT (name, locked_by, locked_at, lock_until) VALUES (s.new_name, s.new_owner, SYSTIMESTAMP, SYSTIMESTAMP)"
	for _, c := range []struct {
		name           string
		matched        bool
		updated        int64
		insert, winner string
	}{
		{"live", true, 0, "", "a"},
		{"ended", true, 1, "", "b"},
		{"new", false, 0, "new", ""},
	} {
		res, err := tbl.Merge(merge, Systimestamp(now, args(c.name, "b", int64(30000))))
		if err != nil {
			t.Fatal(err)
		}
		if res.Matched != c.matched || res.Updated != c.updated || (res.Insert == nil) != (c.insert == "") {
			t.Errorf("%s: %+v", c.name, res)
		}
		if c.insert != "" && (res.Insert.Name != c.insert || res.Insert.Owner != "b") {
			t.Errorf("%s: inserts %+v", c.name, res.Insert)
		}
		if r := tbl.Rows[c.name]; r != nil && r.Owner != c.winner {
			t.Errorf("%s: owner %q, want %q", c.name, r.Owner, c.winner)
		}
	}
	if got := tbl.Rows["ended"].Until; !got.Equal(now.Add(30 * time.Second)) {
		t.Errorf("taken-over until %v", got)
	}
	n, err := tbl.Update("UPDATE shedlock SET lock_until = SYSTIMESTAMP WHERE name = ? AND lock_until > SYSTIMESTAMP", Systimestamp(now, args("live")))
	if err != nil || n != 1 || !tbl.Rows["live"].Until.Equal(now) {
		t.Errorf("expire: %d, %v, until %v", n, err, tbl.Rows["live"].Until)
	}
	if _, err := tbl.Update("UPDATE shedlock SET lock_until <> SYSTIMESTAMP WHERE name = ?", Systimestamp(now, args("live"))); err == nil {
		t.Error("a SET item that is a comparison: no error")
	}
	n, err = tbl.Delete("DELETE FROM shedlock WHERE name = ? AND lock_until <= SYSTIMESTAMP", Systimestamp(now, args("live")))
	if err != nil || n != 1 || tbl.Rows["live"] != nil {
		t.Errorf("delete: %d, %v", n, err)
	}
}
