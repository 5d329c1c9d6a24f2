package mysql

import (
	"database/sql/driver"
	"slices"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/leasesim"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// The batch refresh statement run from its text by the shared lease model
// (offline; TestRefreshBatchLive runs it on the server): on every preset
// it renews exactly the live rows of the owner whose name and token it
// was given — not a row another owner took over, not an expired one, not
// a row acquired again since (another token), not a live row of the
// owner that was not asked for — and its row count says how many.
func TestRefreshBatchSimulated(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, preset := range dialects.Presets() {
		t.Run(preset, func(t *testing.T) {
			schema, err := dialects.Table{Preset: preset}.Schema()
			if err != nil {
				t.Fatal(err)
			}
			hasToken := schema.TokenCol != ""
			live, gone := now.Add(time.Minute), now.Add(-time.Second)
			rows := map[string]*leasesim.Row{
				"r0": {Name: "r0", Owner: "a", Token: 1, LockedAt: now.Add(-time.Second), Until: live},
				"r1": {Name: "r1", Owner: "b", Token: 1, LockedAt: now.Add(-time.Second), Until: live},
				"r2": {Name: "r2", Owner: "a", Token: 1, LockedAt: now.Add(-time.Minute), Until: gone},
				"r4": {Name: "r4", Owner: "a", Token: 1, LockedAt: now.Add(-time.Second), Until: live},
				"r6": {Name: "r6", Owner: "a", Token: 1, LockedAt: now.Add(-time.Second), Until: live},
			}
			asked := []string{"r0", "r1", "r2", "r4"}
			tokens := []int64{1, 1, 1, 1}
			want := []string{"r0", "r4"}
			if hasToken {
				rows["r3"] = &leasesim.Row{Name: "r3", Owner: "a", Token: 2, LockedAt: now.Add(-time.Second), Until: live}
				asked, tokens = append(asked, "r3"), append(tokens, 1) // r3 was acquired again: token 2
			}
			before := map[string]time.Time{}
			for k, r := range rows {
				if !hasToken {
					r.Token = 0
				}
				before[k] = r.Until
			}
			stmt := (&Builder{}).RefreshBatch(schema, len(asked))
			var vals []any
			for _, a := range stmt.Args {
				switch a {
				case locktable.ArgAtMostMs:
					vals = append(vals, int64(90_000))
				case locktable.ArgOwner:
					vals = append(vals, "a")
				case locktable.ArgNameList:
					for _, n := range asked {
						vals = append(vals, n)
					}
				case locktable.ArgNameTokenList:
					for i, n := range asked {
						vals = append(vals, n, tokens[i])
					}
				default:
					t.Fatalf("argument kind %d", a)
				}
			}
			args := make([]driver.NamedValue, len(vals))
			for i, v := range vals {
				args[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
			}
			env := leasesim.Env{
				Placeholder: leasesim.Bound(args),
				Ident: func(name string) (any, bool) {
					return name, name == "MICROSECOND"
				},
				Func: func(name string, a []any) (any, bool, error) {
					switch name {
					case "UTC_TIMESTAMP":
						return now, true, nil
					case "TIMESTAMPADD":
						us, _ := a[1].(int64)
						at, _ := a[2].(time.Time)
						return at.Add(time.Duration(us) * time.Microsecond), true, nil
					}
					return nil, false, nil
				},
			}
			lt := &leasesim.Table{Schema: schema, Rows: rows}
			res, err := lt.Exec(stmt.SQL, env)
			if err != nil {
				t.Fatalf("%v\n%s", err, stmt.SQL)
			}
			var renewed []string
			for _, r := range res.Rows {
				renewed = append(renewed, r.Name)
			}
			slices.Sort(renewed)
			if !slices.Equal(renewed, want) || res.Affected() != int64(len(want)) {
				t.Errorf("renewed %v (row count %d), want %v", renewed, res.Affected(), want)
			}
			for k, r := range rows {
				switch {
				case slices.Contains(want, k) && !r.Until.Equal(now.Add(90*time.Second)):
					t.Errorf("%s: until %s, want now + 90s", k, r.Until)
				case !slices.Contains(want, k) && !r.Until.Equal(before[k]):
					t.Errorf("%s (owner %s): until %s, was %s; want it untouched", k, r.Owner, r.Until, before[k])
				}
			}
		})
	}
}
