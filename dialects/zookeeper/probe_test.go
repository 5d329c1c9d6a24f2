package zookeeper

import (
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

func TestParseSrvr(t *testing.T) {
	out := "Zookeeper version: 3.8.4-9316c2a7a97e1666d8f4593f34dd6fc36ecc436c, built on 2024-02-12 22:16 UTC\n" +
		"Latency min/avg/max: 0/0.0/0\nReceived: 3\nSent: 2\nConnections: 1\nOutstanding: 0\nZxid: 0x0\nMode: follower\nNode count: 5\n"
	v, m, built := parseSrvr(out)
	if v != "3.8.4" || m != "follower" {
		t.Errorf("parseSrvr = %q, %q", v, m)
	}
	if b := banner("3.8.4", "ensemble of 3", built); b != "ZooKeeper 3.8.4, ensemble of 3, built on 2024-02-12 22:16 UTC" {
		t.Errorf("banner = %q", b)
	}
	_, _, built = parseSrvr("Zookeeper version: 3.8.0-${mvngit.commit.id}\n")
	if b := banner("3.8.0", "standalone", built); b != "ZooKeeper 3.8.0, standalone" {
		t.Errorf("banner without a build date = %q", b)
	}
	if v, m, _ := parseSrvr("srvr is not executed because it is not in the whitelist.\n"); v != "" || m != "" {
		t.Errorf("refused srvr parsed as %q, %q", v, m)
	}
}

func TestRisks(t *testing.T) {
	for _, c := range []struct {
		info  dialects.Info
		facts *facts
		want  string
	}{
		{dialects.Info{Mode: "standalone"}, &facts{modes: []string{"standalone"}}, "standalone server"},
		{dialects.Info{Mode: "ensemble of 4"}, &facts{members: 4}, "ensemble of 4 tolerates no more failures than one of 3"},
		{dialects.Info{}, &facts{srvrRefused: true}, "4lw.commands.whitelist"},
	} {
		b := &Backend{info: c.info, facts: c.facts}
		if got := riskText(b.Risks()); !strings.Contains(got, c.want) {
			t.Errorf("%+v: risks %q lack %q", c.info, got, c.want)
		}
		// None hands a lock to two holders: run and lock.Open stay
		// quiet, and selfcheck does not fail on them.
		if r := dialects.TwoHolderRisks(b); len(r) != 0 {
			t.Errorf("%+v: two-holder risks %+v", c.info, r)
		}
	}
	b := &Backend{info: dialects.Info{Mode: "ensemble of 3"}, facts: &facts{members: 3, modes: []string{"leader"}}}
	if r := b.Risks(); len(r) != 0 {
		t.Errorf("an ensemble of 3 has risks: %+v", r)
	}
}

// riskText is every risk's id, detail and remedy, for matching.
func riskText(risks []dialects.Risk) string {
	var b strings.Builder
	for _, r := range risks {
		b.WriteString(r.ID + ": " + r.Detail + "; " + r.Remedy + "\n")
	}
	return b.String()
}
