package search

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/piweb/piweb/internal/sessiontest"
)

// checkHashes fails unless AppendTermHashes gives for text what
// TermOffsets and HashTerm give, term by term, with the AVX2 kernel
// (where there is one) and with the Go code.
func checkHashes(t *testing.T, text string, seed uint64) {
	t.Helper()
	var want []TermHash
	TermOffsets(text, func(term []byte, off int) {
		want = append(want, TermHash{HashTerm(seed, term), uint32(off)})
	})
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	paths := []bool{false}
	if saved {
		paths = []bool{true, false}
	}
	sharedMu.Lock()
	defer sharedMu.Unlock()
	for _, avx2 := range paths {
		useAVX2 = avx2
		// A new Hasher, the same again (its memo now holds the text's
		// spans), and one kept from text to text and seed to seed.
		var h Hasher
		for _, h := range []*Hasher{&h, &h, &shared[b2i(avx2)]} {
			got := h.Append(nil, text, seed)
			if h.BadUTF8() != !utf8.ValidString(text) {
				t.Fatalf("%.80q (AVX2 %v): BadUTF8 %v, valid %v", text, avx2, h.BadUTF8(), utf8.ValidString(text))
			}
			if len(got) != len(want) {
				t.Fatalf("%.80q (AVX2 %v): %d terms, TermOffsets gives %d", text, avx2, len(got), len(want))
			}
			for k := range got {
				if got[k] != want[k] {
					t.Fatalf("%.80q (AVX2 %v): term %d is %+v, TermOffsets and HashTerm give %+v", text, avx2, k, got[k], want[k])
				}
			}
		}
	}
}

// shared is checkHashes' Hashers kept from call to call, by path.
var (
	sharedMu sync.Mutex
	shared   [2]Hasher
)

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestAppendTermHashesMemo: spans that rarely repeat turn the memo off
// for a while, and spans that do turn it back on; the terms are those
// TermOffsets gives all along.
func TestAppendTermHashesMemo(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var sb strings.Builder
	for range 2 * memoWindow { // words of 3 to 7 random Cyrillic letters
		for range 3 + rng.IntN(5) {
			sb.WriteRune(0x430 + rune(rng.IntN(32)))
		}
		sb.WriteByte(' ')
	}
	random := sb.String()
	var h Hasher
	h.Append(nil, random, 1)
	if h.t.skip == 0 {
		t.Fatalf("%d spans of random words: the memo is still read", 2*memoWindow)
	}
	again := strings.Repeat("café → résumé ✓ ", memoSkip/2)
	h.Append(nil, again, 1)
	if h.t.skip != 0 || h.t.hits == 0 {
		t.Fatalf("after %d repeated spans: skip %d, hits %d", memoSkip*2, h.t.skip, h.t.hits)
	}
	checkHashes(t, random+again+random, 1)
}

func TestAppendTermHashes(t *testing.T) {
	texts := []string{
		"", "x", "X", "aB", "Hello, World! requestHandler newHTTPServer 日本語のテキスト 🚀launch ✓ ❤️ Café \u212a ΣΊΣΥΦΟΣ",
		strings.Repeat("ab", 40), strings.Repeat("aB", 40), strings.Repeat("Ab", 21), "abcdefgh", "abcdefghI", "ABCDEFGH",
		"fooé", "éfoo", "fooÉbar", "getHTTPÉtat", "x\xffy", "\xe6\x97", "a\u0301b", "v1.2.3 0x1f snake_case-and.dots",
		strings.Repeat("Z", 100) + "é", "line\nnext\ttab",
	}
	// Real text: this repository's documents and sources.
	for _, pat := range []string{"../*.md", "../docs/*.md", "*.go", "../store/*.go"} {
		files, _ := filepath.Glob(pat)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, string(b))
		}
	}
	for _, s := range texts {
		checkHashes(t, s, 0)
		checkHashes(t, s, 0x9e3779b97f4a7c15)
	}
	// Random text from an alphabet rich in word boundaries, camel case,
	// long runs and non-ASCII letters, marks, CJK and symbols.
	alphabet := []string{"a", "b", "z", "A", "B", "Z", "0", "9", " ", "_", "-", ".", "\n", "é", "É", "ß", "σ", "Σ", "\u0301",
		"日", "本", "ー", "。", "🚀", "✓", "\ufe0f", "\U0001F3FD", "\u212a", "İ", "\xff", "ǅ", "٣",
		"\xe6\x97", "\x80", "\xf0\x9f\x98", "\xed\xa0\x80", "\xc0\xaf", "\ufffd", "…", "→"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var sb strings.Builder
		n := rng.IntN(300)
		for range n {
			switch rng.IntN(8) {
			case 0, 1:
				sb.WriteString(alphabet[rng.IntN(len(alphabet))])
			case 2:
				sb.WriteString(strings.Repeat(alphabet[rng.IntN(8)], rng.IntN(80))) // runs across blocks
			default:
				sb.WriteString(alphabet[rng.IntN(8)]) // mostly ASCII words
			}
		}
		checkHashes(t, sb.String(), rng.Uint64())
	}
}

// TestAppendTermHashesPlaces puts words of every kind the fast paths
// tell apart at every place around the edges of the 64-byte blocks and of
// the text, alone and between other words.
func TestAppendTermHashesPlaces(t *testing.T) {
	a := func(n int) string { return strings.Repeat("a", n) }
	words := []string{
		// ASCII: short, 9 to 16 bytes, longer, camel case in and beyond 8 bytes.
		"x", "abcdefgh", "abcdefghi", "abcdefghijklmnop", "abcdefghijklmnopq", a(40), a(63), a(64), a(65), a(130),
		"BBb", "aBc", "a1B", "ABCd", "abcdefgH", "aBcDeFgH", "HTTPs", "x9Y", "18T16", "947Z", "AbCdEfGh", "ABcDEfGH",
		"toolResult", "abcdefghijklmnoP", "newHTTPServer", "aBcDeFgHiJkLmNoP", "aBaBaBaBaBaBaBaB", a(39) + "B", a(40) + "B",
		// Camel case where the 8 bytes of a 9- to 16-byte word meet.
		"ABCDEFGHIJKLMNOp", "AAAAAAAAbbbb", "aaaaaaaBb", "aaaaaaaaBb", "AAAAAAAABb", "a9aaaaaaaB", "aaaaaaa9Bc", "aBaBaBaBaBaBa", "aBaBaBaBaBaBaB",
		// Not ASCII: letters that keep or change their case, marks, CJK, symbols, separators.
		"café", "naïve", "résumé", "π", "Ωmega", "ÉCOLE", "getHTTPÉtat", "fooÉbar", "İstanbul", "ΣΊΣΥΦΟΣ", "a\u0301b",
		"日本語", "中文", "한국어", "ー", "✓", "😀", "🚀", "❤️", "→", "…", "π≈3.14159", "\U00020000\U00020001", "\U0001d400x",
		// At MaxTerm: a rune across the cut, lower-casing that changes the length.
		a(62) + "é", a(63) + "é", a(61) + "日", a(62) + "日", a(60) + "😀", a(63) + "É", a(62) + "É", a(61) + "İ", a(62) + "İ",
		strings.Repeat("é", 32) + "x", strings.Repeat("É", 33), strings.Repeat("日", 22), a(30) + "é" + a(40),
		// ASCII words that end where a rune that is not ASCII starts, of every class.
		"abc✓", "abc日本", "abc→x", "abc\u00a0x", "xyzΩmega", "AbcÉ", "aBc✓", "toolResult日本", "aBcDeFgHiJ→", a(20) + "…", "ab😀cd", "x9π", "aBcé", "HTTPéx", "xYzñ",
		// Invalid UTF-8 inside and after words.
		"x\xffy", "\xe6\x97", "caf\xc3", "caf\xc3(", "\xed\xa0\x80", "é\xff", "日\xe6\x97本", a(70) + "\xff",
		// Runs of mixed scripts, and ASCII words long enough to reach a
		// block's end before them.
		"abc日本語déf✓→ghi", "caféΩmega日本😀x", "naïve…résumé", "x" + strings.Repeat("日é✓", 10), a(20) + "日本" + a(20) + "é" + a(20),
		a(30) + " " + a(33) + "Éx", a(50) + " " + a(20) + "日本", "aB" + a(60) + "→Ωmega", strings.Repeat("aÉ", 20), strings.Repeat("Ⱥb", 25),
	}
	for _, w := range words {
		for p := range 140 {
			pad := strings.Repeat(" ", p)
			for _, s := range []string{pad + w, pad + w + " end", pad + w + w, "z" + pad[min(p, 1):] + w + ".Z", strings.Repeat("q", p) + w} {
				checkHashes(t, s, 3)
			}
		}
	}
}

func TestHashTermSpreads(t *testing.T) {
	// Distinct short terms do not collide (a sanity check of the mixing).
	seen := map[uint64]string{}
	var b []byte
	for i := range 200000 {
		b = b[:0]
		for x := i; ; x /= 37 {
			b = append(b, "abcdefghijklmnopqrstuvwxyz0123456789é"[x%37])
			if x < 37 {
				break
			}
		}
		for _, w := range [][]byte{b, append(b, make([]byte, 8)...)[:len(b)+8]} {
			h := HashTerm(7, w)
			if hs := hashString(7, string(w)); hs != h {
				t.Fatalf("%q: hashString %x, HashTerm %x", w, hs, h)
			}
			if o, ok := seen[h]; ok && o != string(w) {
				t.Fatalf("%q and %q collide", o, w)
			}
			seen[h] = string(w)
		}
	}
}

func FuzzTermHashes(f *testing.F) {
	for _, s := range []string{"Hello, World! requestHandler", "newHTTPServer 日本語", "fooÉbar", "x\xffy", strings.Repeat("Ab", 30)} {
		f.Add(s, uint64(1))
	}
	f.Fuzz(func(t *testing.T, text string, seed uint64) {
		checkHashes(t, text, seed)
		if utf8.ValidString(text) {
			for _, th := range AppendTermHashes(nil, text, seed) {
				if HashTerm(seed, TermAt(nil, text, int(th.Off))) != th.H {
					t.Fatalf("TermAt(%q, %d) does not hash as the term", text, th.Off)
				}
			}
		}
	})
}

// benchText is prose and code, mostly ASCII, as sessions hold.
var benchText = strings.Repeat("The requestHandler returned an error: cannot open /tmp/x.db (permission denied). "+
	"func (s *Store) Batch() *Batch { return &Batch{s: s} } // 日本語 café 🚀\n", 200)

func BenchmarkTermOffsets(b *testing.B) {
	b.SetBytes(int64(len(benchText)))
	for range b.N {
		var h uint64
		TermOffsets(benchText, func(term []byte, off int) { h += HashTerm(1, term) })
	}
}

func BenchmarkAppendTermHashes(b *testing.B) {
	b.SetBytes(int64(len(benchText)))
	var dst []TermHash
	for range b.N {
		dst = AppendTermHashes(dst[:0], benchText, 1)
	}
}

func BenchmarkBuildTab(b *testing.B) {
	for range b.N {
		buildTab()
	}
}

// asciiText is benchText without its non-ASCII words.
var asciiText = strings.Repeat("The requestHandler returned an error: cannot open /tmp/x.db (permission denied). "+
	"func (s *Store) Batch() *Batch { return &Batch{s: s} } // see the docs\n", 200)

func BenchmarkAppendTermHashesASCII(b *testing.B) {
	b.SetBytes(int64(len(asciiText)))
	var dst []TermHash
	for range b.N {
		dst = AppendTermHashes(dst[:0], asciiText, 1)
	}
}

// genText is the longer strings of generated sessions, as the index
// reads them (for the benchmarks).
func genText(b *testing.B) []string {
	var texts []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			if len(v) > 20 {
				texts = append(texts, v)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, line := range strings.Split(sessiontest.String(1, 400, sessiontest.Options{}), "\n") {
		var v any
		if json.Unmarshal([]byte(line), &v) == nil {
			walk(v)
		}
	}
	return texts
}

func BenchmarkAppendTermHashesGen(b *testing.B) {
	texts := genText(b)
	n := 0
	for _, s := range texts {
		n += len(s)
	}
	b.SetBytes(int64(n))
	b.ResetTimer()
	var dst []TermHash
	for range b.N {
		for _, s := range texts {
			dst = AppendTermHashes(dst[:0], s, 1)
		}
	}
}

func BenchmarkTermOffsetsGen(b *testing.B) {
	texts := genText(b)
	n := 0
	for _, s := range texts {
		n += len(s)
	}
	b.SetBytes(int64(n))
	b.ResetTimer()
	for range b.N {
		for _, s := range texts {
			var h uint64
			TermOffsets(s, func(term []byte, off int) { h += HashTerm(1, term) })
		}
	}
}

// TestRuneTab: the table agrees with class, isUpper and appendLowerCut
// for every rune it holds, and tabAt with the table (or with class,
// isUpper and lower for runes above it) and with decode.
func TestRuneTab(t *testing.T) {
	tabOnce.Do(buildTab)
	var th termHasher
	for r := rune(0); r < tabRunes+0x1000; r++ {
		want := class(r)
		if isUpper(r) {
			want |= tabUpper
		}
		if lower(r) != r {
			want |= tabLower
		}
		if r < tabRunes && runeTab[r] != want {
			t.Fatalf("%U: table %#x, class, isUpper and lower give %#x", r, runeTab[r], want)
		}
		if r >= utf8.RuneSelf && utf8.ValidRune(r) {
			for _, s := range []string{string(r), string(r) + "x", "x" + string(r)} {
				j := strings.IndexRune(s, r)
				if tab, size := th.tabAt(s, j); tab != want || size != utf8.RuneLen(r) || th.bad {
					t.Fatalf("%q: tabAt %#x %d (bad %v), want %#x %d", s, tab, size, th.bad, want, utf8.RuneLen(r))
				}
			}
		}
		s := strings.Repeat(string(r), 3)
		want2, _ := appendLowerCut(nil, s)
		if got := lowerCut(nil, s); string(got) != string(want2) {
			t.Fatalf("%U: lowerCut %q, appendLowerCut %q", r, got, want2)
		}
	}
	// Not UTF-8: one byte, read as utf8.RuneError, and noted.
	for _, s := range []string{"\xff", "\x80", "\xbf", "\xc0\xaf", "\xc1\xbf", "\xc3", "\xc3(", "\xc3\xc3", "\xe6\x97", "\xe6\x97(",
		"\xe6(\x97", "\xed\xa0\x80", "\xed\xbf\xbf", "\xe0\x80\x80", "\xe0\x9f\xbf", "\xf0\x9f\x98", "\xf0\x8f\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xf8"} {
		th.bad = false
		if tab, size := th.tabAt(s, 0); tab != runeTab[utf8.RuneError] || size != 1 || !th.bad {
			t.Fatalf("%q: tabAt %#x %d (bad %v), want %#x 1 (bad)", s, tab, size, th.bad, runeTab[utf8.RuneError])
		}
	}
	for _, s := range []string{"x\xffy", "\xe6\x97", strings.Repeat("É", 40), strings.Repeat("İ", 30),
		strings.Repeat("Ⱥ", 30), strings.Repeat("aÉ", 40), "ΩmegaİÉ\u212a", "é\xc3", "Σ\xc3(x"} {
		want, _ := appendLowerCut(nil, s)
		if got := lowerCut(nil, s); string(got) != string(want) {
			t.Fatalf("%q: lowerCut %q, appendLowerCut %q", s, got, want)
		}
	}
}

// BenchmarkAppendTermHashesKinds measures each kind of token of the
// generated text between ASCII words, a repetition of "handler K a " per
// op: less the ASCII one's time, the cost of K.
func BenchmarkAppendTermHashesKinds(b *testing.B) {
	for _, k := range []string{"ascii", "café", "résumé", "Ωmega", "π≈3.14159", "日本語", "한국어", "→", "✓", "…", "😀", "context"} {
		b.Run(k, func(b *testing.B) {
			const reps = 1000
			text := strings.Repeat("handler "+k+" a ", reps)
			var dst []TermHash
			var h Hasher
			b.ResetTimer()
			for range b.N {
				dst = h.Append(dst[:0], text, 1)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*reps), "ns/rep")
		})
	}
}

// proseTexts are sentences of scripts other than Latin, and of Latin
// with many letters that are not ASCII, for BenchmarkAppendTermHashesProse.
var proseTexts = map[string]string{
	"ru":    "Функция возвращает ошибку, если файл не найден. Проверьте путь к сессии и попробуйте снова; обработчик запросов читает каждую строку журнала и строит дерево записей по идентификаторам родителей. ",
	"el":    "Η συνάρτηση επιστρέφει σφάλμα όταν το αρχείο δεν βρεθεί. Ελέγξτε τη διαδρομή της συνεδρίας και δοκιμάστε ξανά· ο χειριστής διαβάζει κάθε γραμμή του ημερολογίου. ",
	"zh":    "该函数在找不到文件时返回错误。请检查会话路径后重试；请求处理程序读取日志的每一行，并根据父标识符构建条目树。",
	"ja":    "この関数はファイルが見つからない場合にエラーを返します。セッションのパスを確認して、もう一度お試しください。ハンドラーはログの各行を読み取ります。",
	"mixed": "Zoë and José fixed the naïve café parser — it’s “done” now → see Müller’s résumé; Straße, Ærøskøbing, Łódź, İstanbul, Ångström. ",
}

func BenchmarkAppendTermHashesProse(b *testing.B) {
	for _, k := range []string{"ru", "el", "zh", "ja", "mixed"} {
		b.Run(k, func(b *testing.B) {
			// Words shuffled so that the memo meets them in many spellings.
			words := strings.Fields(proseTexts[k])
			rng := rand.New(rand.NewPCG(1, 2))
			var sb strings.Builder
			for sb.Len() < 256<<10 {
				w := words[rng.IntN(len(words))]
				if rng.IntN(3) == 0 {
					w = strings.ToUpper(w[:1]) + w[1:]
				}
				sb.WriteString(w)
				sb.WriteByte(' ')
			}
			benchHasher(b, sb.String())
		})
	}
}

// BenchmarkAppendTermHashesRandom: words of 3 to 8 random letters of one
// script (each a memo miss).
func BenchmarkAppendTermHashesRandom(b *testing.B) {
	for _, k := range []struct {
		name string
		lo   rune
	}{{"cyrillic", 0x430}, {"greek", 0x3b1}, {"latin1", 0xe0}, {"cjk", 0x4e00}} {
		b.Run(k.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			var sb strings.Builder
			for sb.Len() < 256<<10 {
				for range 3 + rng.IntN(6) {
					sb.WriteRune(k.lo + rune(rng.IntN(24)))
				}
				sb.WriteByte(' ')
			}
			benchHasher(b, sb.String())
		})
	}
}

// benchHasher measures one Hasher's Append of text, again and again.
func benchHasher(b *testing.B, text string) {
	b.SetBytes(int64(len(text)))
	var dst []TermHash
	var h Hasher
	b.ResetTimer()
	for range b.N {
		dst = h.Append(dst[:0], text, 1)
	}
}
