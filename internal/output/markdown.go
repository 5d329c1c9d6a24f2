package output

import (
	"fmt"
	"io"
	"strings"

	"github.com/schedlock/schedlock/checks"
)

var markdownStatus = map[checks.Status]string{
	checks.StatusPass: "✅ pass",
	checks.StatusFail: "❌ fail",
	checks.StatusSkip: "⏭️ skip",
	checks.StatusWarn: "⚠️ warn",
}

func writeReportMarkdown(w io.Writer, r *checks.Report) error {
	var b strings.Builder
	b.WriteString("# schedlock selfcheck\n\n")
	fmt.Fprintf(&b, "- **Target:** %s\n", mdCode(r.Target))
	fmt.Fprintf(&b, "- **Database:** %s\n", mdEscape(DescribeDatabase(r.Info)))
	fmt.Fprintf(&b, "- **Elapsed:** %s\n\n", FormatDuration(r.Elapsed))
	// Not tablewriter's Markdown renderer: it pads every cell to its column's width and writes ":---" rules.
	b.WriteString("| Check | Strategy | Status | Time | Detail |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, res := range r.Results {
		status := markdownStatus[res.Status]
		if status == "" {
			status = string(res.Status)
		}
		fmt.Fprintf(&b, "| %s %s | %s | %s | %s | %s |\n", mdCode(res.ID), mdEscape(res.Title), strategyLabel(res.Strategy), status, FormatDuration(res.Duration), mdEscape(res.Detail))
	}
	var remedies []string
	for _, res := range r.Results {
		if res.Remedy != "" && (res.Status == checks.StatusFail || res.Status == checks.StatusWarn) {
			remedies = append(remedies, fmt.Sprintf("- %s (%s): %s\n", mdCode(res.ID), res.Status, mdEscape(res.Remedy)))
		}
	}
	if len(remedies) > 0 {
		b.WriteString("\n## Remedies\n\n")
		b.WriteString(strings.Join(remedies, ""))
	}
	b.WriteString("\n" + Summary(r) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// mdEscape makes s safe inside a Markdown table cell: pipes escaped, line
// breaks as <br>, HTML-significant characters as entities.
func mdEscape(s string) string {
	r := strings.NewReplacer("\\", "\\\\", "|", "\\|", "<", "&lt;", ">", "&gt;", "\r\n", "<br>", "\n", "<br>", "\r", "<br>", "`", "\\`", "*", "\\*", "_", "\\_")
	return r.Replace(s)
}

// mdCode writes s as inline code, with a fence long enough for any
// backticks inside.
func mdCode(s string) string {
	if s == "" {
		return ""
	}
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "|", "\\|").Replace(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}
