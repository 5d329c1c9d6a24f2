package mysql

import (
	"context"
	"database/sql/driver"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/fakesql"
)

func TestClaimFor(t *testing.T) {
	tests := []struct {
		version, comment string
		claim            dialects.ClaimStrategy
	}{
		{"8.0.11-TiDB-v8.5.6", "", dialects.ClaimOptimistic},
		{"8.0.11", "TiDB Server (Apache License 2.0) Community Edition, MySQL 8.0 compatible", dialects.ClaimOptimistic},
		{"8.0.36", "MySQL Community Server - GPL", ""},
		{"10.11.19-MariaDB-0+deb12u1", "Debian 12", ""},
	}
	for _, tt := range tests {
		claim, why := claimFor(ParseVersion(tt.version, tt.comment))
		if claim != tt.claim || (claim != "" && !strings.Contains(why, "SKIP LOCKED")) {
			t.Errorf("%s: claimFor = %q, %q; want %q", tt.version, claim, why, tt.claim)
		}
	}
}

// TestTiDBRecommendation: TiDB gets the lease table (GET_LOCK waits at
// least a second and cannot name its holder) and never the session
// locker.
func TestTiDBRecommendation(t *testing.T) {
	info := ParseVersion("8.0.11-TiDB-v8.5.6", "")
	if s, why := Recommend(info); s != dialects.StrategyTable || !strings.Contains(why, "1 s") {
		t.Errorf("Recommend(TiDB) = %s, %q; want table, naming the GET_LOCK clamp", s, why)
	}
	if _, err := NewSessionLocker(nil, &SessionOps{Info: info}); err == nil {
		t.Error("TiDB got a session locker")
	}
}

func TestAuroraRecommendationNamesTheWriterEndpoint(t *testing.T) {
	info := ParseVersion("8.0.32", "Source distribution")
	info.Variant = VariantAurora
	if s, why := Recommend(info); s != dialects.StrategySession || !strings.Contains(why, "writer) endpoint") {
		t.Errorf("Recommend(Aurora MySQL) = %s, %q; want session with the writer-endpoint note", s, why)
	}
	info.Variant = ""
	if _, why := Recommend(info); strings.Contains(why, "Aurora") {
		t.Errorf("plain MySQL's reason mentions Aurora: %q", why)
	}
}

// refusingServer answers every statement with a syntax error, so a probe
// learns nothing from the server and only the product's facts remain.
type refusingServer struct{}

func (refusingServer) Handle(*fakesql.Session, string, []driver.NamedValue) (fakesql.Response, error) {
	return fakesql.Response{}, &mysql.MySQLError{Number: errParse, Message: "You have an error in your SQL syntax"}
}
func (refusingServer) Close(*fakesql.Session) {}

// TestTiDBProbeRecommendsOptimisticClaims: whatever the probe finds, DB.Probe
// on TiDB recommends optimistic claims and the lease table.
func TestTiDBProbeRecommendsOptimisticClaims(t *testing.T) {
	sqlDB, _ := fakesql.Open(refusingServer{})
	defer sqlDB.Close()
	db := &Backend{}
	db.DB = sqlkit.New(sqlDB, ParseVersion("8.0.11-TiDB-v8.5.6", ""), nil, db)
	caps, err := db.Probe(context.Background(), dialects.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := caps.Recommended
	if r.ClaimStrategy != dialects.ClaimOptimistic || r.ClaimReason != tidbClaimReason || r.LockStrategy != dialects.StrategyTable {
		t.Errorf("recommended %+v; want table and optimistic claims", r)
	}
}
