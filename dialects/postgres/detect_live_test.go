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
	info, facts, err := detect(ctx, db)
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
