package dameng

import (
	"errors"
	"fmt"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
	"strings"
	"testing"
)

// dmErrorValue is DmError used by value, as a driver might return it.
type dmErrorValue struct {
	ErrCode int32
	ErrText string
}

func (e dmErrorValue) Error() string { return fmt.Sprintf("Error %d: %s", e.ErrCode, e.ErrText) }

// unexportedCode has a code the reader must not trust: the field is not
// ErrCode.
type unexportedCode struct{ code int32 }

func (e *unexportedCode) Error() string { return "something else" }

func TestErrorCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		code int
		ok   bool
	}{
		{"driver error", dmErr(-6602, "违反表[T1]唯一性约束条件[U1]"), -6602, true},
		{"wrapped driver error", fmt.Errorf("acquire: %w", dmErr(-2106, "无效的表或视图名[T1]")), -2106, true},
		{"joined", errors.Join(errors.New("first"), dmErr(-6625, "x")), -6625, true},
		{"by value", dmErrorValue{ErrCode: -2106, ErrText: "无效的表或视图名[T]"}, -2106, true},
		{"message only", errors.New("Error -6602: 违反表[T1]唯一性约束条件[U1]"), -6602, true},
		{"message inside a wrap", fmt.Errorf("exec: %w", errors.New("Error -2106: 第1行附近出现错误：无效的表或视图名[DOC]")), -2106, true},
		{"driver-side code", dmErr(6001, "error.communicationError"), 6001, true},
		{"no code", errors.New("connection refused"), 0, false},
		{"other field", &unexportedCode{code: -6602}, 0, false},
		{"nil", nil, 0, false},
		{"nil pointer", (*DmError)(nil), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var code int
			var ok bool
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("ErrorCode panicked: %v", r)
					}
				}()
				if tt.name == "nil pointer" {
					code, ok = ErrorCode(fmt.Errorf("w: %w", tt.err))
					return
				}
				code, ok = ErrorCode(tt.err)
			}()
			if tt.name == "nil pointer" {
				return // must not panic; the text has no code either
			}
			if code != tt.code || ok != tt.ok {
				t.Errorf("ErrorCode = %d, %v; want %d, %v", code, ok, tt.code, tt.ok)
			}
		})
	}
}

func TestIsDuplicateKey(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{dmErr(-6602, "违反表[SCHEDLOCK]唯一性约束条件[INDEX1]"), true},
		{dmErr(-6610, "x"), true},
		{dmErr(-6611, "x"), true},
		{dmErr(-6612, "x"), true},
		{dmErr(-6625, "x"), true},
		{fmt.Errorf("acquire: %w", dmErr(-6602, "x")), true},
		{dmErr(-9999, "违反表[T]唯一性约束"), true},
		{errors.New("violate unique constraint on [T]"), true},
		{dmErr(-2106, "无效的表或视图名[T]"), false},
		{dmErr(-6603, "违反引用约束"), false},
		{errors.New("Error -66021: something"), false},
		{nil, false},
	} {
		if got := IsDuplicateKey(tt.err); got != tt.want {
			t.Errorf("IsDuplicateKey(%v) = %v, want %v", tt.err, got, tt.want)
		}
		if got := (&Builder{}).IsDuplicateKey(tt.err); got != tt.want {
			t.Errorf("Builder.IsDuplicateKey(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestIsMissingTable(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{dmErr(-2106, "第1 行附近出现错误:\n无效的表或视图名[SCHEDLOCK]"), true},
		{dmErr(-2106, "anything"), true},
		{errors.New("无效的表或视图名[T]"), true},
		{errors.New("Invalid table or view name [SCHEDLOCK]"), true},
		{errors.New("Error -2106: 第1行附近出现错误：无效的表或视图名[DOC]"), true},
		{dmErr(-6602, "违反表[T]唯一性约束"), false},
		{dmErr(-2111, "无效的列名[X]"), false},
		{nil, false},
	} {
		if got := IsMissingTable(tt.err); got != tt.want {
			t.Errorf("IsMissingTable(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestOneLineDropsTheStack(t *testing.T) {
	got := oralike.OneLine(dmErr(-6602, "违反表[T]唯一性约束"))
	if got != "Error -6602: 违反表[T]唯一性约束" {
		t.Errorf("OneLine = %q", got)
	}
}

func TestTrimmedKeepsTheCode(t *testing.T) {
	err := fmt.Errorf("DBMS_LOCK.REQUEST: %w", trimmed(dmErr(-6602, "违反表[T]唯一性约束")))
	if strings.Contains(err.Error(), "stack info") || !strings.HasSuffix(err.Error(), "Error -6602: 违反表[T]唯一性约束") {
		t.Errorf("trimmed text = %q", err.Error())
	}
	var de *DmError
	if code, _ := ErrorCode(err); code != -6602 || !errors.As(err, &de) {
		t.Errorf("trimmed error lost its driver error: code %d, As %v", code, de)
	}
	plain := errors.New("no stack")
	if trimmed(plain) != plain {
		t.Error("an error without a stack was wrapped")
	}
}
