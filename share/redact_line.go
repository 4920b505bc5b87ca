package share

import (
	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/secrets"
	"github.com/piweb/piweb/sessions"
)

// RedactLine returns a line of a session file (without its newline) with
// its secrets redacted as a share with Redact{Secrets: true} redacts them:
// the providers' signatures dropped from a message's content, and the
// secrets in every string but the structural ones (ids, types, times)
// replaced by Redacted. A line that is not JSON has the secrets in its
// raw text replaced. It returns the rule that found each secret replaced.
func RedactLine(line []byte) ([]byte, []string) {
	end, err := js.ScanValue(line, js.SkipWS(line, 0))
	if err != nil || js.SkipWS(line, end) != len(line) {
		text := string(line)
		found := secrets.Find(text)
		return []byte(secrets.Replace(text, found)), rulesOf(found)
	}
	if t, ok := js.Lookup(line, "type"); ok {
		e := sessions.Entry{Type: js.Str(t)}
		line = editContent(line, &e, dropSignatures)
	}
	var out []byte
	var rules []string
	last := 0
	known := secrets.Scan(string(line))
	eachString(line, func(start, end int, s string) {
		found := secrets.FindWith(s, known)
		if len(found) == 0 {
			return
		}
		rules = append(rules, rulesOf(found)...)
		out = append(append(out, line[last:start]...), js.Quote(secrets.Replace(s, found))...)
		last = end
	})
	if out == nil {
		return line, nil
	}
	return append(out, line[last:]...), rules
}

// rulesOf returns the rule of each finding.
func rulesOf(found []secrets.Finding) []string {
	out := make([]string, len(found))
	for i, f := range found {
		out[i] = f.Rule
	}
	return out
}
