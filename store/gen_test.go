package store

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The benchmark corpus: the searchable pieces of a generated sessions
// root, as the sessions package would hand them to AddDocs. Sizes follow
// the session generator of the sessions package (sessions/gen_test.go):
// per turn a user message, an assistant reply with thinking, text and tool
// calls, the tools' outputs (about one in 400 of 100 KB–2 MB), now and then
// summaries, labels, names and custom messages; sessions of long-tailed
// length in ~40 projects. The words are not its 130-word pool, which would
// make every query match everything: a Zipf-distributed vocabulary of
// 30,000 words plus camelCase identifiers, paths, numbers, hex ids, a
// little CJK and emoji, as real tool output and conversation have.

// corpusVersion names the cache files; change it whenever the output changes.
const corpusVersion = 1

// benchBytes is the text size of the benchmark corpus: $PIWEB_BENCH_BYTES, else 1 GiB.
func benchBytes(b testing.TB) int64 {
	if v := os.Getenv("PIWEB_BENCH_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("PIWEB_BENCH_BYTES=%q: want a positive number of bytes", v)
		}
		return n
	}
	return 1 << 30
}

// benchFile is one generated session: its path and its documents in order.
type benchFile struct {
	path string
	docs []Doc
}

// vocab is the generator's word list.
type vocab struct {
	words []string
	zipf  *rand.Zipf
}

var syllables = strings.Fields(`ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo ga ge gi go ha he hi ho
	ja je ka ke ki ko la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su
	ta te ti to tu va ve vi vo wa we wi xa ya yo za ze zi zo an en in on un ar er ir or ur al el il ol st tr pr`)

// common are real words placed at the head of the distribution, so that
// benchmark queries can name frequent words.
var common = strings.Fields(`the a to of and in is it that for on with as this be are was func return if else err nil
	package import struct type string int bool var const range defer error test build file handler session
	entry message user assistant tool result context tree index server request response update fix refactor
	config cache query search value list map key path time data read write open close start stop run check`)

func newVocab(r *rand.Rand) *vocab {
	v := &vocab{}
	seen := map[string]bool{}
	for _, w := range common {
		seen[w] = true
		v.words = append(v.words, w)
	}
	for len(v.words) < 30000 {
		n := 1 + r.Intn(3) + r.Intn(2)
		var b strings.Builder
		for range n {
			b.WriteString(syllables[r.Intn(len(syllables))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			v.words = append(v.words, w)
		}
	}
	v.zipf = rand.NewZipf(r, 1.07, 3, uint64(len(v.words)-1))
	return v
}

var cjk = []string{"日本語のテキスト", "検索する", "中文文本", "한국어 텍스트", "テスト結果", "错误信息"}
var emoji = []string{"🚀", "✓", "✗", "😀", "🔥", "👍"}

// text appends about n bytes of generated text to b.
func (v *vocab) text(b []byte, r *rand.Rand, n int) []byte {
	end := len(b) + n
	for len(b) < end {
		switch p := r.Intn(1000); {
		case p < 80: // an identifier
			w1, w2 := v.words[v.zipf.Uint64()%2000], v.words[v.zipf.Uint64()%2000]
			b = append(b, w1...)
			b = append(b, strings.ToUpper(w2[:1])...)
			b = append(b, w2[1:]...)
		case p < 170: // a number
			b = strconv.AppendInt(b, int64(r.Intn(1<<uint(2+r.Intn(20)))), 10)
		case p < 185: // a hex id
			b = fmt.Appendf(b, "%x", r.Uint64()>>uint(r.Intn(40)))
		case p < 215: // a path
			b = append(b, "src/"...)
			b = append(b, v.words[v.zipf.Uint64()%500]...)
			b = append(b, '/')
			b = append(b, v.words[v.zipf.Uint64()]...)
			b = append(b, ".go"...)
		case p < 217:
			b = append(b, cjk[r.Intn(len(cjk))]...)
		case p < 218:
			b = append(b, emoji[r.Intn(len(emoji))]...)
		default:
			w := v.words[v.zipf.Uint64()]
			if r.Intn(20) == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b = append(b, w...)
		}
		switch p := r.Intn(100); {
		case p < 6:
			b = append(b, '\n')
		case p < 9:
			b = append(b, ". "...)
		case p < 12:
			b = append(b, ", "...)
		case p < 14:
			b = append(b, "();\n\t"...)
		default:
			b = append(b, ' ')
		}
	}
	return b
}

// size draws a log-normal size with the given median, clamped.
func size(r *rand.Rand, median float64, lo, hi int) int {
	return max(lo, min(hi, int(median*math.Exp(0.9*r.NormFloat64()))))
}

// genSession returns the documents of one session of about `turns` turns.
func genSession(v *vocab, seed int64, path, project string, start time.Time, turns int) benchFile {
	r := rand.New(rand.NewSource(seed))
	f := benchFile{path: path}
	now := start.UnixMilli()
	pos := 0
	var buf []byte
	add := func(typ, role string, part int, n int) {
		buf = v.text(buf[:0], r, n)
		f.docs = append(f.docs, Doc{EntryID: fmt.Sprintf("%08x", r.Uint32()), Position: pos, Part: part, Type: typ,
			Role: role, Time: now, Project: project, Text: string(buf)})
	}
	for range turns {
		now += int64(50 + r.Intn(120000))
		pos++
		add("text", "user", 0, size(r, 180, 2, 20000))
		now += int64(50 + r.Intn(30000))
		pos++
		part := 0
		if r.Intn(3) > 0 {
			add("thinking", "assistant", part, size(r, 400, 10, 30000))
			part++
		}
		calls := 0
		if r.Intn(10) < 7 {
			calls = 1 + r.Intn(3)/2 + r.Intn(4)/3
		}
		if calls == 0 || r.Intn(2) == 0 {
			add("text", "assistant", part, size(r, 350, 5, 40000))
			part++
		}
		for range calls {
			n := 60
			switch r.Intn(7) {
			case 0:
				n = size(r, 450, 10, 16000) // edit: old and new text
			case 1:
				n = size(r, 1500, 20, 60000) // write
			case 2:
				n = size(r, 60, 3, 2000) // bash
			}
			add("toolCall", "tool", part, n)
			part++
		}
		for range calls {
			now += int64(50 + r.Intn(20000))
			pos++
			n := size(r, 900, 1, 50000)
			if r.Intn(400) == 0 {
				n = 100<<10 + r.Intn(1900<<10)
			}
			add("toolResult", "tool", 0, n)
		}
		switch p := r.Intn(1000); {
		case p < 15:
			pos++
			add("label", "label", 0, size(r, 12, 3, 40))
		case p < 20:
			pos++
			add("name", "user", 0, size(r, 25, 3, 80))
		case p < 30:
			pos++
			add("custom", "custom", 0, size(r, 200, 5, 5000))
		case p < 40:
			pos++
			add("summary", "summary", 0, size(r, 3000, 200, 20000))
		case p < 50:
			pos++
			add("summary", "summary", 0, size(r, 600, 20, 5000))
		}
	}
	return f
}

var benchCorpusOnce struct {
	sync.Mutex
	files []benchFile
	bytes int64
}

// benchCorpus returns the corpus of about benchBytes of text (cached in
// the temp folder) and its total text size.
func benchCorpus(b testing.TB) ([]benchFile, int64) {
	c := &benchCorpusOnce
	c.Lock()
	defer c.Unlock()
	if c.files != nil {
		return c.files, c.bytes
	}
	want := benchBytes(b)
	path := filepath.Join(os.TempDir(), fmt.Sprintf("piweb-store-bench-%d-v%d.corpus", want, corpusVersion))
	files, err := readCorpus(path)
	if err != nil {
		b.Logf("generating %d bytes of session text into %s (once; later runs reuse it)", want, path)
		files = genCorpus(want)
		tmp := fmt.Sprintf("%s.tmp%d", path, os.Getpid())
		if err := writeCorpus(tmp, files); err != nil {
			os.Remove(tmp)
			b.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			b.Fatal(err)
		}
	}
	var total int64
	for _, f := range files {
		for _, d := range f.docs {
			total += int64(len(d.Text))
		}
	}
	c.files, c.bytes = files, total
	return files, total
}

// genCorpus generates sessions until their text reaches want bytes.
func genCorpus(want int64) []benchFile {
	r := rand.New(rand.NewSource(want))
	v := newVocab(rand.New(rand.NewSource(1)))
	nproj := int(min(40, 6+want/(32<<20)))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var files []benchFile
	var total int64
	for i := 0; total < want; i++ {
		project := fmt.Sprintf("--home-dev-project-%02d--", r.Intn(nproj))
		turns := int(min(4000, max(1, 25*math.Exp(1.3*r.NormFloat64()))))
		start := base.Add(time.Duration(i) * 17 * time.Minute)
		f := genSession(v, r.Int63(), fmt.Sprintf("/root/%s/%05d.jsonl", project, i), project, start, turns)
		for _, d := range f.docs {
			total += int64(len(d.Text))
		}
		files = append(files, f)
	}
	return files
}

func writeCorpus(path string, files []benchFile) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var b []byte
	str := func(s string) { b = binary.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	num := func(n int64) { b = binary.AppendVarint(b, n) }
	num(int64(len(files)))
	for _, bf := range files {
		str(bf.path)
		num(int64(len(bf.docs)))
		for _, d := range bf.docs {
			str(d.EntryID)
			num(int64(d.Position))
			num(int64(d.Part))
			str(d.Type)
			str(d.Role)
			num(d.Time)
			str(d.Project)
			str(d.Text)
			if _, err := w.Write(b); err != nil {
				f.Close()
				return err
			}
			b = b[:0]
		}
	}
	if _, err := w.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func readCorpus(path string) ([]benchFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var ferr error
	num := func() int64 {
		n, err := binary.ReadVarint(r)
		if err != nil && ferr == nil {
			ferr = err
		}
		return n
	}
	intern := map[string]string{}
	str := func(keep bool) string {
		n, err := binary.ReadUvarint(r)
		if err != nil || n > 1<<30 {
			if ferr == nil {
				ferr = fmt.Errorf("bad corpus: %v", err)
			}
			return ""
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil && ferr == nil {
			ferr = err
		}
		if keep {
			if s, ok := intern[string(b)]; ok {
				return s
			}
			intern[string(b)] = string(b)
		}
		return string(b)
	}
	nf := num()
	files := make([]benchFile, 0, max(0, min(nf, 1<<20)))
	for range nf {
		bf := benchFile{path: str(false)}
		nd := num()
		for range nd {
			d := Doc{EntryID: str(false), Position: int(num()), Part: int(num()), Type: str(true), Role: str(true), Time: num(), Project: str(true), Text: str(false)}
			bf.docs = append(bf.docs, d)
		}
		if ferr != nil {
			return nil, ferr
		}
		files = append(files, bf)
	}
	return files, nil
}

func TestGenCorpus(t *testing.T) {
	a, b := genCorpus(2<<20), genCorpus(2<<20)
	if len(a) != len(b) || len(a) < 3 {
		t.Fatalf("%d and %d files", len(a), len(b))
	}
	roles := map[string]int{}
	for i := range a {
		if len(a[i].docs) != len(b[i].docs) {
			t.Fatalf("file %d: %d and %d docs", i, len(a[i].docs), len(b[i].docs))
		}
		for k, d := range a[i].docs {
			if d != b[i].docs[k] {
				t.Fatalf("same seed, different doc %d of file %d", k, i)
			}
			roles[d.Role]++
		}
	}
	for _, r := range []string{"user", "assistant", "tool"} {
		if roles[r] == 0 {
			t.Errorf("no %s documents: %v", r, roles)
		}
	}
	path := filepath.Join(t.TempDir(), "c")
	if err := writeCorpus(path, a); err != nil {
		t.Fatal(err)
	}
	back, err := readCorpus(path)
	if err != nil || len(back) != len(a) || back[2].docs[3] != a[2].docs[3] {
		t.Fatalf("read back: %d files, %v", len(back), err)
	}
}

func newRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }
