package search

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// pickerTexts are texts whose case and white space JavaScript and Go may
// read differently.
var pickerTexts = []string{
	"İstanbul ISTANBUL istanbul", "ΟΔΟΣ οδος Οδός ΣΑΣ", "Straße STRASSE strasse", "ǅemal ǄEMAL ǆemal",
	"\u212a kelvin K k", "ﬁle FILE ﬀ", "ＡＢＣ ａｂｃ", "i\u0307 I\u0307", "a\u00a0b a\u2028b a\u3000b a\ufeffb a\u200bb",
	"tab\tnew\nline  two  spaces", "東京\u3000大阪 東京と大阪", "ÅNGSTRÖM Ångström \u212b", "Ωmega ωmega \u2126", "ĲSSEL ĳssel", "MAẞ maß",
	"encoding base64 digest() returns", "Ꭰ ꭰ Cherokee", "Ⴀ ⴀ Georgian", "ǈ Ǉ ǉ", "ΐ ΰ", "ſ long s",
}

// TestMatchAsPi: a query of words and phrases finds a text exactly when
// pi's session picker finds it there (pi's own parseSearchQuery and
// matchSession on a session of that text): words and phrases from the
// texts themselves, cut anywhere and cased anyhow.
func TestMatchAsPi(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 2))
	piece := func() string {
		rs := []rune(pickerTexts[r.IntN(len(pickerTexts))])
		i := r.IntN(len(rs))
		p := string(rs[i:min(len(rs), i+1+r.IntN(8))])
		switch r.IntN(3) {
		case 0:
			p = strings.ToUpper(p)
		case 1:
			p = strings.ToLower(p)
		}
		return p
	}
	var queries []string
	for len(queries) < 3000 {
		var b strings.Builder
		for k := range 1 + r.IntN(3) {
			if k > 0 {
				b.WriteByte(' ')
			}
			if r.IntN(3) == 0 {
				b.WriteString(`"` + piece() + `"`)
			} else {
				b.WriteString(strings.Join(strings.FieldsFunc(piece(), Blank), ""))
			}
		}
		q := b.String()
		// piweb's own syntax aside: filters, negation, control characters.
		if strings.ContainsAny(q, ":\u2028\u200b\u0307") || strings.HasPrefix(q, "-") || strings.Contains(q, " -") || strings.TrimFunc(strings.ReplaceAll(q, `"`, ""), isSpace) == "" || !utf8.ValidString(q) {
			continue
		}
		queries = append(queries, q)
	}
	var pi []struct {
		Error string `json:"error"`
		Found []bool `json:"found"`
	}
	askPi(t, "picker.mjs", map[string]any{"queries": queries, "texts": pickerTexts}, &pi)
	if len(pi) != len(queries) {
		t.Fatalf("picker.mjs printed %d answers for %d queries", len(pi), len(queries))
	}
	bad := 0
	for k, query := range queries {
		q, err := ParseAt(query, testNow)
		if err != nil || pi[k].Error != "" {
			if (err != nil) != (pi[k].Error != "") {
				t.Errorf("%q: piweb %v, pi %q", query, err, pi[k].Error)
				bad++
			}
			continue
		}
		for j, text := range pickerTexts {
			_, ok, _ := q.Match(text)
			// piweb may find more where it folds more: ς is σ, İ is i, ſ is s.
			if ok && !pi[k].Found[j] && strings.ContainsFunc(query+text, foldsMore) {
				continue
			}
			if ok != pi[k].Found[j] {
				t.Errorf("%q in %q: piweb %v, pi %v", query, text, ok, pi[k].Found[j])
				bad++
			}
		}
		if bad > 40 {
			t.Fatal("too many differences")
		}
	}
}

// foldsMore reports whether piweb folds r with more letters than pi's
// toLowerCase does: a final Σ, İ (pi: i and a combining dot), and the
// letters whose upper case lower-cases to another letter (ſ, µ, ϑ).
func foldsMore(r rune) bool {
	return r == 'Σ' || r == 'İ' || lower(r) != unicode.ToLower(r)
}
