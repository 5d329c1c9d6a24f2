package dameng

import (
	"github.com/schedlock/schedlock/dialects/internal/oralike"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// Dameng server error codes this dialect acts on. The server reports them
// negative. They are read from the error without importing the driver's
// type (see ErrorCode).
const (
	// codeInvalidTable: "无效的表或视图名[%s]" (English servers: "invalid
	// table or view name"). Also what DROP TABLE of a missing table says.
	codeInvalidTable = -2106
	// codeUniqueViolated: "违反表[%s]唯一性约束条件[%s]".
	codeUniqueViolated = -6602
)

// duplicateKeyCodes are the codes read as a duplicate key. -6602 is the
// documented one. -6610, -6611 and -6612 are listed beside it as
// unique-violation codes by Dameng's JDBC wrapper ([U]: their exact
// wording is unverified); -6625 is reported to replace -6602 on newer
// servers ([U]).
var duplicateKeyCodes = map[int]bool{
	codeUniqueViolated: true,
	-6610:              true,
	-6611:              true,
	-6612:              true,
	-6625:              true,
}

// codeInMessage finds the code in the driver's error text, which starts
// "Error <code>: <server message>".
var codeInMessage = regexp.MustCompile(`(?:^|\s)Error (-?\d+):`)

// ErrorCode returns the Dameng error code carried by err, and whether there
// is one. The driver's error type (*dm.DmError) cannot be imported here
// (the driver is only in builds with the dameng tag), so the code is read
// without it, in this order:
//
//  1. an exported integer field ErrCode on an error in err's chain (how
//     *dm.DmError stores it: ErrCode int32, negative for server errors);
//  2. "Error <code>:" in the message, the form *dm.DmError.Error() writes.
func ErrorCode(err error) (int, bool) {
	if err == nil {
		return 0, false
	}
	code, found := 0, false
	walkChain(err, func(e error) bool {
		code, found = errCodeField(e)
		return found
	})
	if found {
		return code, true
	}
	if m := codeInMessage.FindStringSubmatch(err.Error()); m != nil {
		if n, convErr := strconv.Atoi(m[1]); convErr == nil {
			return n, true
		}
	}
	return 0, false
}

// walkChain calls visit on err and every error it wraps, depth first,
// until visit returns true.
func walkChain(err error, visit func(error) bool) bool {
	for err != nil {
		if visit(err) {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				if walkChain(inner, visit) {
					return true
				}
			}
			return false
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return false
		}
	}
	return false
}

// errCodeField reads an exported integer field ErrCode of the struct e
// is (or points to).
func errCodeField(e error) (int, bool) {
	v := reflect.ValueOf(e)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return 0, false
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return 0, false
	}
	f, ok := v.Type().FieldByName("ErrCode")
	if !ok || !f.IsExported() {
		return 0, false
	}
	field := v.FieldByIndex(f.Index)
	if !field.CanInt() {
		return 0, false
	}
	return int(field.Int()), true
}

// hasCode reports whether err carries one of codes.
func hasCode(err error, codes ...int) bool {
	code, ok := ErrorCode(err)
	if !ok {
		return false
	}
	for _, c := range codes {
		if code == c {
			return true
		}
	}
	return false
}

// IsDuplicateKey reports a unique-constraint violation: one of
// duplicateKeyCodes, or a message saying so ("唯一性约束", "unique
// constraint") for a code this package does not know.
func IsDuplicateKey(err error) bool {
	if err == nil {
		return false
	}
	if code, ok := ErrorCode(err); ok && duplicateKeyCodes[code] {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "唯一性约束") || strings.Contains(strings.ToLower(msg), "unique constraint")
}

// IsMissingTable reports "invalid table or view name": code -2106, or the
// message in Chinese or English (matched on both, because the code is
// the one fact a localized server cannot change and the text the one a
// wrapped error cannot lose).
func IsMissingTable(err error) bool {
	if err == nil {
		return false
	}
	if hasCode(err, codeInvalidTable) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "无效的表或视图名") || strings.Contains(strings.ToLower(msg), "invalid table or view name")
}

// serverError shows a driver error without the stack trace the driver
// appends to its text; it unwraps to the driver's error, so ErrorCode and
// errors.As still reach it.
type serverError struct{ err error }

func (e *serverError) Error() string { return oralike.OneLine(e.err) }

// Unwrap returns the driver's error.
func (e *serverError) Unwrap() error { return e.err }

// trimmed wraps err in a serverError when its text carries a stack trace.
func trimmed(err error) error {
	if err == nil || !strings.Contains(err.Error(), "\nstack info:") {
		return err
	}
	return &serverError{err: err}
}
