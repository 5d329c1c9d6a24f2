package dsn

import (
	"strings"
	"testing"
	"time"
)

// x-partition-bound is parsed, stripped from what the driver sees and
// bounded.
func TestPartitionBoundOption(t *testing.T) {
	d, err := Parse("postgres://app@db1:5432/jobs?sslmode=disable&x-partition-bound=20s")
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Options.PartitionBound(); got != 20*time.Second {
		t.Errorf("PartitionBound = %s, want 20s", got)
	}
	if strings.Contains(d.conn, "partition") {
		t.Errorf("the driver sees %q", d.conn)
	}
	none, err := Parse("postgres://app@db1:5432/jobs")
	if err != nil {
		t.Fatal(err)
	}
	if got := none.Options.PartitionBound(); got != 0 {
		t.Errorf("PartitionBound without the option = %s, want 0 (the default)", got)
	}
	for _, bad := range []string{"soon", "500ms", "2h", "-5s"} {
		if _, err := Parse("mysql://root@127.0.0.1:3306/test?x-partition-bound=" + bad); err == nil || !strings.Contains(err.Error(), "x-partition-bound") {
			t.Errorf("x-partition-bound=%s: error %v, want one naming the option", bad, err)
		}
	}
}
