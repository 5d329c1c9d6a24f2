package locktable

// NameFitter is optionally implemented by a Builder whose name column
// compares or measures names differently from dialects.MapName (SQL
// Server: length in UTF-16 code units, trailing spaces ignored by
// comparisons). The engine then stores every name as FitName(name, limit),
// limit being MaxNameRunes of the schema, instead of MapName(name, limit).
// FitName must be deterministic and keep names that the column would
// confuse apart.
type NameFitter interface {
	FitName(name string, limit int) string
}
