package exporter

import (
	"fmt"
	"html"
	"strings"
)

// The status page is written out here rather than by html/template: that
// package links text/template's evaluation of methods by name, which makes
// the linker keep every exported method of the binary (main_test.go's
// TestBinary refuses it). Every value from a database passes through esc,
// which escapes it for text and for quoted attribute values alike.

// esc escapes s for HTML text and double-quoted attributes.
func esc(s string) string { return html.EscapeString(s) }

// statusCSS styles the page; below 700px each lock becomes a card.
const statusCSS = `body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; padding: 1em; max-width: 80em; color: #1d1d1f; background: #fff; }
h1 { font-size: 1.4em; margin: 0 0 .2em; }
h2 { font-size: 1.1em; margin: 1.5em 0 .4em; overflow-wrap: anywhere; }
.meta { color: #666; font-size: .9em; }
.badge { display: inline-block; padding: .1em .5em; border-radius: .8em; font-size: .8em; font-weight: 600; vertical-align: middle; }
.up { background: #d7f5dd; color: #135e26; }
.down { background: #fbd9d9; color: #8a1414; }
.error { color: #8a1414; word-break: break-word; }
table { border-collapse: collapse; width: 100%; font-size: .92em; }
th, td { text-align: left; padding: .35em .6em; border-bottom: 1px solid #e3e3e3; vertical-align: top; }
th { background: #f5f5f7; font-weight: 600; }
td.name { font-weight: 600; overflow-wrap: anywhere; min-width: 8em; }
.state { font-weight: 600; }
.state-held { color: #135e26; }
.state-paused, .state-waiting { color: #6b4e00; }
.state-expired, .state-stale { color: #8a1414; }
.state-free { color: #666; }
.warn { color: #8a1414; font-weight: 600; }
ol.runs { list-style: none; margin: 0; padding: 0; }
li.run { white-space: nowrap; font-size: .85em; font-variant-numeric: tabular-nums; }
li.run:first-child { font-size: 1em; }
li.run.failed { color: #8a1414; }
.notes { color: #666; font-size: .85em; }
@media (max-width: 700px) {
  table, thead, tbody, tr, td { display: block; }
  thead { display: none; }
  tr { border: 1px solid #e3e3e3; border-radius: .4em; margin: .6em 0; padding: .3em .2em; }
  td { border: none; padding: .15em .5em; }
  td::before { content: attr(data-label) ": "; color: #666; font-weight: 400; }
  td.name::before { content: ""; }
}
`

// renderStatus writes the status page of v.
func renderStatus(v statusView) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="%d">
<title>schedlock: locks</title>
<style>
%s</style>
</head>
<body>
<h1>schedlock: locks</h1>
<p class="meta">Read at %s (UTC); this page reloads every %ds. It only shows: freeing, pausing and resuming a lock stay with <code>schedlock unlock</code>, <code>pause</code> and <code>resume</code>.</p>
`, v.Refresh, statusCSS, esc(v.Taken), v.Refresh)
	for _, t := range v.Targets {
		renderTarget(&b, t)
	}
	b.WriteString("</body>\n</html>\n")
	return b.String()
}

func renderTarget(b *strings.Builder, t targetView) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	badge := `<span class="badge up">up</span>`
	if !t.Up {
		badge = `<span class="badge down">down</span>`
	}
	p("<section class=\"target\" data-dsn=\"%s\" data-up=\"%t\">\n<h2>%s %s</h2>\n", esc(t.Name), t.Up, esc(t.Name), badge)
	if t.Up {
		plural := "s"
		if len(t.Locks) == 1 {
			plural = ""
		}
		p("<p class=\"meta\">read in %s, %d lock%s</p>\n", esc(t.Duration), len(t.Locks), plural)
	} else {
		p("<p class=\"error\">%s: %s</p>\n", esc(t.Reason), esc(t.Error))
	}
	switch {
	case len(t.Locks) > 0:
		b.WriteString("<table>\n<thead><tr><th>Lock</th><th>State</th><th>Holder</th><th>Lease end (UTC)</th><th>Last runs</th><th>Source</th></tr></thead>\n<tbody>\n")
		for _, l := range t.Locks {
			name := l.Name
			if l.Namespace != "" {
				name = l.Namespace + "::" + l.Name
			}
			waiting := ""
			if l.Waiters > 0 {
				waiting = fmt.Sprintf(" (%d waiting)", l.Waiters)
			}
			if l.StaleReason != "" {
				waiting += " (" + esc(l.StaleReason) + ")"
			}
			p("<tr class=\"lock\" data-lock=\"%s\" data-state=\"%s\">\n", esc(l.Name), esc(l.State))
			p("<td class=\"name\" data-label=\"Lock\">%s</td>\n", esc(name))
			p("<td data-label=\"State\"><span class=\"state state-%s\">%s</span>%s</td>\n", esc(l.State), esc(l.State), waiting)
			p("<td data-label=\"Holder\">%s</td>\n", esc(l.Holder))
			p("<td data-label=\"Lease end\">%s</td>\n", esc(l.LeaseEnd))
			renderRuns(b, l.Runs)
			p("<td data-label=\"Source\">%s</td>\n</tr>\n", esc(l.Source))
		}
		b.WriteString("</tbody>\n</table>\n")
	case t.Up:
		b.WriteString("<p class=\"meta\">No locks.</p>\n")
	}
	if len(t.Notes) > 0 {
		b.WriteString("<ul class=\"notes\">")
		for _, n := range t.Notes {
			p("<li>%s</li>", esc(n))
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString("</section>\n")
}

// renderRuns writes a lock's recent runs, newest first, one line each:
// a failed run (exit code not 0) in red, one past RunShareWarning of its
// at-most in bold.
func renderRuns(b *strings.Builder, runs []runView) {
	if len(runs) == 0 {
		b.WriteString("<td data-label=\"Last runs\">-</td>\n")
		return
	}
	b.WriteString("<td data-label=\"Last runs\"><ol class=\"runs\">")
	for _, r := range runs {
		class := "run"
		if r.ExitCode != 0 {
			class += " failed"
		}
		if r.Warn {
			class += " warn"
		}
		fmt.Fprintf(b, "<li class=\"%s\" data-exit=\"%d\">%s</li>", class, r.ExitCode, esc(r.Text))
	}
	b.WriteString("</ol></td>\n")
}
