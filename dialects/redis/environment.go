package redis

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/schedlock/schedlock/dialects"
)

// ShedLock's Redis environment, and schedlock's namespaces on its layout.
//
// ShedLock's RedisLockProvider (and the Jedis and Lettuce providers, all
// through InternalRedisLockProvider) builds its key as
// "<keyPrefix>:<environment>:<name>", keyPrefix "job-lock" and environment
// "default" unless the builder's keyPrefix(…) and environment(…) say
// otherwise. On the shedlock preset a namespace NS is that environment:
// the lock NAME of namespace NS is the key job-lock:NS:NAME — what
// ShedLock's .environment("NS") takes — not the name NS::NAME of the
// default environment, which is how a namespace is kept on every other
// layout. No namespace is ShedLock's default environment, "default".
//
// Table.Name names the environment too (--table, x-table: an identifier),
// as it did before namespaces reached this layout; the table name
// "shedlock" (the preset's own, what an administrator's default resolves
// to) means "default". Table and namespace may name one environment
// together; two different ones are refused (namespaceTable).
//
// An environment schedlock takes or looks up is not empty or only white
// space, is valid UTF-8, and holds no ':' and no control character
// (checkEnv). ShedLock allows any string, but job-lock:a:b:NAME reads as
// environment "a" with the lock "b:NAME" as well as environment "a:b" with
// "NAME", so a listing of every environment could not tell them apart (it
// reads the first: an environment ends at its first ':'); and a control
// character is invisible in a key, a listing and a message. A listing
// leaves out the keys of an environment called "shedlock" (layoutOfKey),
// which no table names.

// checkEnv returns an error matching ErrInvalid for an environment
// schedlock does not name (see above).
func checkEnv(env string) error {
	switch {
	case !utf8.ValidString(env):
		return dialects.Invalidf("ShedLock environment %q is not valid UTF-8: give one of printable text, e.g. prod", env)
	case strings.TrimFunc(env, unicode.IsSpace) == "":
		return dialects.Invalidf("ShedLock environment %q is empty or only white space: give one of printable text, e.g. prod", env)
	case strings.ContainsRune(env, ':'):
		return dialects.Invalidf("ShedLock environment %q holds ':': the key job-lock:ENV:NAME would read as another environment's, so no listing could tell them apart; use e.g. prod or eu-prod", env)
	case strings.IndexFunc(env, unicode.IsControl) >= 0:
		return dialects.Invalidf("ShedLock environment %q holds a control character, invisible in keys and listings; use e.g. prod or eu-prod", env)
	}
	return nil
}

// envOf is the environment of the shedlock table named name: "default"
// for none or the preset's own table name.
func envOf(name string) string {
	if name == "" || name == dialects.PresetShedlock {
		return shedlockEnv
	}
	return name
}

// namespaceTable implements dialects.Dialect.NamespaceTable: on the
// shedlock preset the namespace is ShedLock's environment, the table
// whose name is ns; a table that names another environment is refused.
// The native layout keeps namespaces in lock names (NS::NAME).
func namespaceTable(t dialects.Table, ns string) (dialects.Table, bool, error) {
	if t.Preset != dialects.PresetShedlock {
		return t, false, nil
	}
	if err := checkEnv(ns); err != nil {
		return t, false, err
	}
	if ns == dialects.PresetShedlock {
		return t, false, dialects.Invalidf("ShedLock environment %q cannot be named: the table name %s stands for ShedLock's default environment, %q", ns, dialects.PresetShedlock, shedlockEnv)
	}
	// The preset's own table name is no environment given: it is what an
	// administrator's default (ResolveAdminTable) resolves to.
	if t.Name != "" && t.Name != dialects.PresetShedlock && t.Name != ns {
		return t, false, dialects.Invalidf("table %q and namespace %q both name ShedLock's environment (job-lock:ENV:NAME) and differ: name it once, as the namespace", t.Name, ns)
	}
	t.Name = ns
	return t, true, nil
}
