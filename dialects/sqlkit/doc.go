// Package sqlkit is the database/sql kit that schedlock's SQL backends are
// built with, as the store backends are built with their clients: the
// opened database (DB: a pool, what detection learned, the SQL listing of
// lock tables and server lock views, pause and resume), the session-lock
// engine (SessionLocker over a backend's SessionOps: one pinned connection
// per batch of locks, liveness checks, at-least holds) and the probes that
// prove what a database can do (session locks, row locks, its clock).
//
// The contract, the registry and the shared report model (listings,
// capabilities, errors) stay in package dialects; lease tables and claim
// tables are the kit packages locktable and claimtable.
package sqlkit
