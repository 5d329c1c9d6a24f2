package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

func TestDetectLive(t *testing.T) {
	db := liveDB(t)
	ctx := testCtx(t)
	info, facts, _, _, err := detect(ctx, db, "")
	if err != nil {
		t.Fatalf("detect: %v", err)
	}
	if facts != nil {
		t.Errorf("detection on PostgreSQL proved %+v; PostgreSQL is judged from its Info alone", *facts)
	}
	var banner, serverVersion string
	var aurora bool
	if err := db.QueryRowContext(ctx, "SELECT version(), current_setting('server_version'), to_regproc('aurora_version') IS NOT NULL").Scan(&banner, &serverVersion, &aurora); err != nil {
		t.Fatal(err)
	}
	want := dialects.Info{Dialect: Name, Product: dialects.ProductPostgreSQL, Version: strings.Fields(serverVersion)[0], Banner: banner}
	if aurora {
		want.Variant = VariantAurora
	}
	if info != want {
		t.Errorf("detect\n got %+v\nwant %+v", info, want)
	}

	opened, err := New(ctx, db, nil)
	if err != nil || opened.Info != want {
		t.Fatalf("New = %+v, %v; want %+v", opened, err, want)
	}
	if s, _ := opened.Recommend(); s != dialects.StrategySession {
		t.Errorf("Recommend on PostgreSQL = %s, want session", s)
	}
}

func TestDetectLiveCancelled(t *testing.T) {
	db := liveDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if b, err := New(ctx, db, nil); err == nil {
		t.Fatalf("New on a cancelled context = %+v, want an error", b.Info)
	}
}

// The SQL form of Key documented on Key gives the same numbers as Go.
func TestKeyMatchesDocumentedSQL(t *testing.T) {
	db := liveDB(t)
	for _, name := range []string{"nightly-report", "a", "ünïcødé/锁", unique("k-")} {
		var got int64
		err := db.QueryRowContext(testCtx(t),
			`SELECT ('x' || left(encode(sha256(convert_to($1::text, 'UTF8')), 'hex'), 16))::bit(64)::bigint`, name).Scan(&got)
		if err != nil {
			t.Fatal(err)
		}
		if got != Key(name) {
			t.Errorf("SQL key of %q = %d, Key = %d", name, got, Key(name))
		}
	}
}

// Detection looks for the lease table the options name in its one
// statement: a table that exists is seen, one that does not is known not
// to exist, and the pause check learns both without a read of its own.
func TestDetectSeesTheLeaseTableLive(t *testing.T) {
	db := liveDB(t)
	ctx := testCtx(t)
	name := strings.ReplaceAll(unique("seen_"), "-", "_")
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+name+" (x int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE "+name) })
	for _, c := range []struct {
		table  string
		exists bool
	}{{name, true}, {name + "_missing", false}} {
		b, err := New(ctx, db, map[string]string{"table": c.table})
		if err != nil {
			t.Fatal(err)
		}
		exists, known := b.LeaseTableExists(dialects.Table{Name: c.table})
		if !known || exists != c.exists {
			t.Errorf("LeaseTableExists(%s) = %v, known %v; want %v, known", c.table, exists, known, c.exists)
		}
		if _, known := b.LeaseTableExists(dialects.Table{Name: "other_table"}); known {
			t.Errorf("a table detection did not look for is known")
		}
	}
}
