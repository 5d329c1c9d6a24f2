package oralike

import (
	"errors"
	"fmt"
	"testing"
)

func TestQuoteUser(t *testing.T) {
	for user, want := range map[string]string{
		"APP":        "APP",
		"APP_1$#":    "APP_1$#",
		"JOB$1":      "JOB$1",
		"JOB_RUN":    "JOB_RUN",
		"SYSDBA":     "SYSDBA",
		"app":        `"app"`,
		"调度":         `"调度"`,
		"batch user": `"batch user"`,
		"A B":        `"A B"`,
		`we"ird`:     `"we""ird"`,
		`A"B`:        `"A""B"`,
		"1ABC":       `"1ABC"`,
		"":           "<user>",
	} {
		if got := QuoteUser(user); got != want {
			t.Errorf("QuoteUser(%q) = %s, want %s", user, got, want)
		}
	}
}

func TestOneLine(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("ORA-06550: line 1, column 7:\nPLS-00201: identifier  'X' must be declared"), "ORA-06550: line 1, column 7: PLS-00201: identifier 'X' must be declared"},
		{errors.New("Error -6602: 违反表[T]唯一性约束\nstack info:\n   1).  dm.(*DmError).throw\n"), "Error -6602: 违反表[T]唯一性约束"},
		{fmt.Errorf("probe: %w", errors.New("a\n\tb")), "probe: a b"},
	} {
		if got := OneLine(tt.err); got != tt.want {
			t.Errorf("OneLine(%q) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestIgnoring(t *testing.T) {
	want := "BEGIN\n" +
		"  EXECUTE IMMEDIATE 'DROP TABLE app.locks PURGE';\n" +
		"EXCEPTION\n" +
		"  WHEN OTHERS THEN\n" +
		"    IF SQLCODE != -942 THEN\n" +
		"      RAISE;\n" +
		"    END IF;\n" +
		"END;"
	if got := Ignoring("DROP TABLE app.locks PURGE", 942); got != want {
		t.Errorf("Ignoring =\n%s\nwant\n%s", got, want)
	}
}
