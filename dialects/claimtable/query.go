package claimtable

import (
	"strings"
)

// query collects a statement's bound values as its text is written, so
// each placeholder gets the next number in text order.
type query struct {
	b    Builder
	args []any
}

func (q *query) arg(v any) string {
	q.args = append(q.args, v)
	k := KindInt
	switch v.(type) {
	case string:
		k = KindText
	case []byte:
		k = KindBytes
	}
	return q.b.Param(len(q.args), k)
}

// cols is the resolved table with its SQL fragments.
type cols struct {
	t Table
	b Builder
}

func (c cols) c() Columns { return c.t.Columns }

// eligible is the predicate of a claimable row: ready and due, or claimed
// with its lease past (overdue: the worker died). The status values are
// bound.
func (c cols) eligible(q *query, now string) string {
	col, s := c.c(), c.t.Statuses
	ready := "(" + col.Status + " = " + q.arg(s.Ready) + " AND " + col.DueAt + " <= " + now + ")"
	return "(" + ready + " OR (" + col.Status + " = " + q.arg(s.Claimed) + " AND " + col.ClaimedUntil + " <= " + now + "))"
}

// order is the claim order: priority (highest first), due time, id.
func (c cols) order(prefix string) string {
	col := c.c()
	var parts []string
	if col.Priority != "" {
		parts = append(parts, prefix+col.Priority+" DESC")
	}
	return strings.Join(append(parts, prefix+col.DueAt, prefix+col.ID), ", ")
}

// taskColumns are the expressions a claim returns, in scanTask's order:
// id, type, payload, priority, due_at ms, retries, max_retries, version,
// claimed_until ms. prefix qualifies the columns ("t.").
func (c cols) taskColumns(prefix string) []string {
	col := c.c()
	opt := func(name, zero string) string {
		if name == "" {
			return zero
		}
		return prefix + name
	}
	return []string{
		prefix + col.ID,
		opt(col.Type, "''"),
		opt(col.Payload, "NULL"),
		opt(col.Priority, "0"),
		c.b.EpochMs(prefix + col.DueAt),
		prefix + col.Retries,
		opt(col.MaxRetries, "-1"),
		prefix + col.Version,
		c.b.EpochMs(prefix + col.ClaimedUntil),
	}
}

// inList renders "col IN (p, p, …)" for ids.
func inList(q *query, col string, ids []int64) string {
	ps := make([]string, len(ids))
	for i, id := range ids {
		ps[i] = q.arg(id)
	}
	return col + " IN (" + strings.Join(ps, ", ") + ")"
}

// pairs renders "((id = p AND version = p) OR …)" for the rows.
func pairs(q *query, idCol, versionCol string, ids, versions []int64) string {
	ps := make([]string, len(ids))
	for i := range ids {
		ps[i] = "(" + idCol + " = " + q.arg(ids[i]) + " AND " + versionCol + " = " + q.arg(versions[i]) + ")"
	}
	return "(" + strings.Join(ps, " OR ") + ")"
}
