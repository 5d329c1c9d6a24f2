package postgres

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/schedlock/schedlock/dialects"
)

// Hashtext and HashtextExtended give what PostgreSQL 15.20 answered for
// hashtext(s) and hashtextextended(s, 0): every tail length of lookup3's
// 12-byte blocks and multi-byte text.
func TestHashtextKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		s   string
		h   int32
		ext int64
	}{
		{"", -1477818771, -6939563903564495251},
		{"a", 1075015857, 3591986179850072241},
		{"sched:order_close", 1280594467, -3083430498818305501},
		{"abcdefghijkl", -1586087212, -7556637188122330412},
		{"abcdefghijklm", 405849808, 8871624171452417744},
		{"Ünïcødé names ✓ 0123456789", 1916271324, -8488676664451532068},
	} {
		if got := Hashtext(c.s); got != c.h {
			t.Errorf("Hashtext(%q) = %d, want %d", c.s, got, c.h)
		}
		if got := HashtextExtended(c.s); got != c.ext {
			t.Errorf("HashtextExtended(%q) = %d, want %d", c.s, got, c.ext)
		}
		if uint32(HashtextExtended(c.s)) != uint32(Hashtext(c.s)) {
			t.Errorf("%q: the low 32 bits of hashtextextended(s, 0) are not hashtext(s)", c.s)
		}
	}
}

// The live server's hashtext and hashtextextended agree with these for
// random texts of every length up to 100 bytes, ASCII and multi-byte.
func TestHashtextMatchesServer(t *testing.T) {
	db := liveDB(t)
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("abcXYZ019:_-/ éüß✓漢字🙂")
	var texts []string
	for n := 0; n <= 100; n++ {
		for range 5 {
			var b strings.Builder
			for b.Len() < n {
				b.WriteRune(alphabet[rng.IntN(len(alphabet))])
			}
			s := b.String()
			for len(s) > n { // cut to n bytes at a rune boundary
				_, size := utf8.DecodeLastRuneInString(s)
				s = s[:len(s)-size]
			}
			texts = append(texts, s)
		}
	}
	rows, err := db.QueryContext(testCtx(t), "SELECT s, hashtext(s), hashtextextended(s, 0) FROM unnest($1::text[]) AS t(s)", texts)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var s string
		var h int32
		var ext int64
		if err := rows.Scan(&s, &h, &ext); err != nil {
			t.Fatal(err)
		}
		n++
		if Hashtext(s) != h || HashtextExtended(s) != ext {
			t.Errorf("%q: server hashtext %d, hashtextextended %d; computed %d, %d", s, h, ext, Hashtext(s), HashtextExtended(s))
		}
	}
	if err := rows.Err(); err != nil || n != len(texts) {
		t.Fatalf("%d of %d rows: %v", n, len(texts), err)
	}
}

// Raw session names need a key derivation on PostgreSQL;
// hashtextextended needs PostgreSQL 11, and openGauss has none.
func TestCheckSessionNames(t *testing.T) {
	raw := func(key string) dialects.SessionNames { return dialects.SessionNames{Raw: true, Key: key} }
	for _, c := range []struct {
		n    dialects.SessionNames
		info *dialects.Info
		want error
	}{
		{dialects.SessionNames{}, nil, nil},
		{raw(""), nil, dialects.ErrInvalid},
		{raw(dialects.KeyHashtext), &dialects.Info{Product: dialects.ProductPostgreSQL, Version: "9.6.24"}, nil},
		{raw(dialects.KeyHashtextExtended), nil, nil},
		{raw(dialects.KeyHashtextExtended), &dialects.Info{Product: dialects.ProductPostgreSQL, Version: "10.23"}, dialects.ErrUnsupported},
		{raw(dialects.KeyHashtextExtended), &dialects.Info{Product: dialects.ProductPostgreSQL, Version: "11.0"}, nil},
		{raw(dialects.KeyHashtextExtended), &dialects.Info{Product: dialects.ProductOpenGauss, Version: "5.0.0"}, dialects.ErrUnsupported},
		{raw(dialects.KeyAsIs), nil, nil},
	} {
		err := CheckSessionNames(c.n, c.info)
		if (c.want == nil) != (err == nil) || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("CheckSessionNames(%+v, %+v) = %v, want %v", c.n, c.info, err, c.want)
		}
	}
}
