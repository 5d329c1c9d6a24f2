//go:build unix

package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dynamodb"
	"github.com/schedlock/schedlock/dialects/dynamodb/shedlocksim"
	"github.com/schedlock/schedlock/internal/livetest"
	"github.com/schedlock/schedlock/internal/testnet"
)

// dynamoBackend opens dsn for the test's own requests, closed at its end.
func dynamoBackend(t *testing.T, dsn string) *dynamodb.Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := dynamodb.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// dropDynamoTable deletes table at the end of the test.
func dropDynamoTable(t *testing.T, b *dynamodb.Backend, table string) {
	t.Cleanup(func() {
		_, _ = b.Client().DeleteTable(context.Background(), &sdk.DeleteTableInput{TableName: aws.String(table)})
	})
}

// Every command on DynamoDB (dynalite): selfcheck passes, detect names
// the table, its status and key, run holds the lock while locks ls shows
// it with its owner and token, unlock's owner guard refuses and --force
// frees it (run then stops), and bench measures the engine beside the raw
// requests.
func TestDynamoDBCommands(t *testing.T) {
	live := livetest.DSN(t, livetest.DynamoDB)
	r := runCmd(t, false, nil, "selfcheck", "--dsn", live, "-o", "json")
	if r.err != nil {
		t.Fatalf("selfcheck: %v\n%s", r.err, r.stdout)
	}
	if st := checkStatuses(t, r.stdout); st["probe.two-holders"] != "pass" || st["table.acquire"] != "pass" {
		t.Errorf("selfcheck: probe.two-holders %q, table.acquire %q; want both passed", st["probe.two-holders"], st["table.acquire"])
	}
	table := dynamoTable(t, live, "cmd_")
	dropDynamoTable(t, dynamoBackend(t, live), table)
	dsn := live + "&x-table=" + table
	// The DSN's own table is the one detect describes.
	r = runCmd(t, false, nil, "detect", "--dsn", strings.Replace(live, "?", "/"+table+"?", 1), "-o", "json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var det struct{ Dialect, Banner string }
	if err := json.Unmarshal([]byte(r.stdout), &det); err != nil {
		t.Fatal(err)
	}
	if det.Dialect != "dynamodb" || !strings.Contains(det.Banner, "table "+table+": ACTIVE") || !strings.Contains(det.Banner, "name (S, HASH)") {
		t.Errorf("detect: %+v; want dynamodb and the table, its status and its key", det)
	}

	const name = "nightly.report#eu"
	checkRunListedAndForced(t, dsn, name, func(l listedLock) bool { return l.Source == table })
	benchBesideRaw(t, live, "requests")
}

// A pause on the shedlock preset is the lock's own item, so a ShedLock
// node (shedlocksim: ShedLock's exact UpdateItem) finds the lock taken
// until resume.
func TestDynamoDBPauseShedlock(t *testing.T) {
	live := livetest.DSN(t, livetest.DynamoDB)
	b := dynamoBackend(t, live)
	table := fmt.Sprintf("Shedlock_pause_%d", time.Now().UnixNano())
	l, err := b.LeaseLocker(dialects.Table{Preset: dialects.PresetShedlock, Name: table})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.(dialects.TableCreator).CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	dropDynamoTable(t, b, table)
	dsn := live + "&x-preset=shedlock&x-table=" + table
	node := shedlocksim.Node{Client: b.Client(), Table: table, Host: "java-node"}
	r := runCmd(t, false, nil, "pause", "report", "--dsn", dsn, "--for", "1h", "--create", "--yes")
	if r.err != nil {
		t.Fatalf("pause: %v %s", r.err, r.stderr)
	}
	if _, ok, err := node.Lock(ctx, "report", time.Minute); err != nil || ok {
		t.Fatalf("ShedLock took the paused lock (%v, %v)", ok, err)
	}
	r = runCmd(t, false, nil, "resume", "report", "--dsn", dsn, "--yes")
	if r.err != nil {
		t.Fatalf("resume: %v %s", r.err, r.stderr)
	}
	held, ok, err := node.Lock(ctx, "report", time.Minute)
	if err != nil || !ok {
		t.Fatalf("ShedLock could not take the resumed lock (%v, %v)", ok, err)
	}
	if err := node.Unlock(ctx, held, 0); err != nil {
		t.Fatal(err)
	}
}

// Bad input through run, each in one line with its documented exit code
// and nothing written: a table with another key schema (2), a name longer
// than a DynamoDB key (2), a missing table (1), an endpoint that does not
// answer (1).
func TestDynamoDBBadInput(t *testing.T) {
	live := livetest.DSN(t, livetest.DynamoDB)
	b := dynamoBackend(t, live)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	table := fmt.Sprintf("cmd_otherkey_%d", time.Now().UnixNano())
	_, err := b.Client().CreateTable(ctx, &sdk.CreateTableInput{
		TableName:            aws.String(table),
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeN}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil {
		t.Fatal(err)
	}
	dropDynamoTable(t, b, table)
	waitFor(t, 20*time.Second, "the table is active", func() bool {
		d, err := b.Client().DescribeTable(ctx, &sdk.DescribeTableInput{TableName: aws.String(table)})
		return err == nil && d.Table.TableStatus == types.TableStatusActive
	})
	good := dynamoTable(t, live, "cmd_bad_")
	dropDynamoTable(t, b, good)
	cases := []struct {
		what, dsn, name string
		code            int
		says            string
	}{
		{"a table keyed id (N)", live + "&x-table=" + table, "job", CodeUsage, "needs name (S, HASH)"},
		{"a 2049-byte name", live + "&x-table=" + good, strings.Repeat("n", 2049), CodeUsage, "2048"},
		{"a missing table", live + "&x-table=cmd_missing_table", "job", CodeError, "does not exist"},
		{"a closed port", fmt.Sprintf("dynamodb://AKID:secret-key@us-east-1/%s?endpoint=http://127.0.0.1:%d&dial-timeout=1s", good, testnet.FreePort(t)), "job", CodeError, "127.0.0.1"},
	}
	for _, c := range cases {
		r := runCmd(t, false, nil, "run", "--dsn", c.dsn, "--name", c.name, "--", "true")
		if ExitCode(r.err) != c.code || r.err == nil || strings.Contains(r.err.Error(), "\n") || !strings.Contains(r.err.Error(), c.says) || strings.Contains(r.err.Error(), "secret-key") {
			t.Errorf("run on %s: exit %d, %v; want exit %d and one line saying %q", c.what, ExitCode(r.err), r.err, c.code, c.says)
		}
	}
	for _, tbl := range []string{table, good} {
		out, err := b.Client().Scan(ctx, &sdk.ScanInput{TableName: aws.String(tbl), ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		if out.Count != 0 {
			t.Errorf("the refused runs wrote %d items to %s", out.Count, tbl)
		}
	}
}
