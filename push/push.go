// Package push sends a machine's pi session files to a PostgreSQL store
// (piweb push), as the bytes pi wrote, for a team server to mirror.
//
// What it sends. Each session file under the root (library.SessionFiles)
// is sent as whole lines: only what was appended since the last push, up
// to its last newline (a line pi is still writing waits for the next
// push). The store keeps per file (File) how many of its local
// bytes were consumed, how many bytes were sent for them, hashes of the
// first and last bytes consumed, and a generation. A file whose consumed
// part no longer hashes the same (it was rewritten, as pi rewrites a file
// of an old format) or that was pushed with other redactions is sent again
// whole, as a new generation that replaces the old one.
//
// Why it never loses or doubles anything. Every chunk (a megabyte of whole
// lines at most, or one longer line) is written with its file's new
// counters in one transaction, keyed by file, generation and offset, and
// only onto the row as this push read it (ErrMoved otherwise).
// A push killed at any point, or cut off by a server that restarts, leaves
// the store as it was after the last chunk that committed; the next push
// reads the rows and goes on from there. Pushing again what was sent adds
// nothing.
//
// Redaction. With Options.Redact each line is redacted as a share with
// secrets redacted is (share.RedactLine) before it leaves the machine,
// and Stats counts what was masked, by rule.
package push

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/share"
	"github.com/piweb/piweb/store"
)

// Store is where pushes go: store.DB on PostgreSQL.
type Store interface {
	PushedFiles(ctx context.Context, machines ...string) ([]File, error)
	PushChunk(ctx context.Context, c *Chunk) (int64, error)
}

// RedactSecrets is the one redaction Options.Redact takes.
const RedactSecrets = "secrets"

// DefaultChunk is how many bytes of whole lines one chunk holds at most
// (a longer line is a chunk of its own).
const DefaultChunk = 1 << 20

// Options configure a Pusher.
type Options struct {
	Root    string // the sessions root
	Machine string // the name the files are pushed under
	Redact  string // "" or RedactSecrets
	// Chunk is the most bytes of whole lines a chunk holds (default DefaultChunk).
	Chunk int
	// Workers is how many files Push sends at once (default 4): the
	// server's work on one chunk overlaps the reading of the next.
	Workers int
	// BeforeChunk, when set, is called before each chunk is sent with how
	// many this Pusher sent before it; an error stops the push there, as
	// if it were killed (tests cut pushes with it).
	BeforeChunk func(sent int) error
	// Progress, when set, is called after each chunk sent.
	Progress func(Progress)
	Logger   *slog.Logger
}

// Progress is how far a push is.
type Progress struct {
	Files, FilesDone int
	Bytes, BytesDone int64 // local bytes to send and sent
}

// Stats are what a push did.
type Stats struct {
	Files     int   // session files looked at
	Changed   int   // files that had bytes to send
	Rewritten int   // files sent again whole as a new generation
	Bytes     int64 // local bytes consumed
	Sent      int64 // bytes stored (not Bytes when lines were redacted)
	Chunks    int
	// Redacted counts the secrets masked, by the rule that found them.
	Redacted map[string]int
	// Failed are the files that could not be pushed, with why (the others were).
	Failed map[string]error
}

func (s *Stats) add(o Stats) {
	s.Files += o.Files
	s.Changed += o.Changed
	s.Rewritten += o.Rewritten
	s.Bytes += o.Bytes
	s.Sent += o.Sent
	s.Chunks += o.Chunks
	for r, n := range o.Redacted {
		if s.Redacted == nil {
			s.Redacted = map[string]int{}
		}
		s.Redacted[r] += n
	}
	for f, err := range o.Failed {
		if s.Failed == nil {
			s.Failed = map[string]error{}
		}
		s.Failed[f] = err
	}
}

// Pusher pushes the files of one root under one machine name. Its methods
// may be called concurrently; pushes of one file run one at a time.
type Pusher struct {
	st  Store
	opt Options
	log *slog.Logger

	mu     sync.Mutex
	rows   map[string]File // by path under the root, as the store last said
	loaded bool
	chunks int                    // chunks sent so far (BeforeChunk)
	files  map[string]*sync.Mutex // one push of a file at a time
}

// New returns a Pusher of opt.Root's files to st.
func New(st Store, opt Options) (*Pusher, error) {
	if opt.Machine == "" {
		return nil, errors.New("push: no machine name")
	}
	if !validName(opt.Machine) {
		return nil, fmt.Errorf("push: the machine name %q must be UTF-8 without control characters", opt.Machine)
	}
	if opt.Redact != "" && opt.Redact != RedactSecrets {
		return nil, fmt.Errorf("push: cannot redact %q (only %q)", opt.Redact, RedactSecrets)
	}
	if opt.Chunk <= 0 {
		opt.Chunk = DefaultChunk
	}
	if opt.Workers <= 0 {
		opt.Workers = 4
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return &Pusher{st: st, opt: opt, log: opt.Logger, rows: map[string]File{},
		files: map[string]*sync.Mutex{}}, nil
}

// validName reports whether s may name a machine or a file in the store.
func validName(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// load reads what the store holds of this machine's files.
func (p *Pusher) load(ctx context.Context) error {
	rows, err := p.st.PushedFiles(ctx, p.opt.Machine)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rows = make(map[string]File, len(rows))
	for _, r := range rows {
		p.rows[r.Path] = r
	}
	p.loaded = true
	return nil
}

// Push sends what every session file under the root has that the store
// does not. A file that cannot be read is in Stats.Failed, and the others
// are pushed; a store that fails (unreachable, restarting) stops the push
// with its error, nothing lost: push again.
func (p *Pusher) Push(ctx context.Context) (Stats, error) {
	var total Stats
	if err := p.load(ctx); err != nil {
		return total, err
	}
	files, err := library.SessionFiles(p.opt.Root)
	if err != nil {
		return total, err
	}
	prog := &progress{Progress: Progress{Files: len(files)}}
	p.mu.Lock()
	for _, f := range files {
		if rel, ok := p.rel(f); ok {
			if fi, err := os.Stat(f); err == nil {
				prog.Bytes += max(0, fi.Size()-p.rows[rel].Consumed)
			}
		}
	}
	p.mu.Unlock()
	// Files are sent by a few workers at once; the first failure of the
	// store stops them all (the next push goes on from there).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan string)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range p.opt.Workers {
		wg.Go(func() {
			for f := range jobs {
				st, err := p.pushFile(ctx, f, prog)
				mu.Lock()
				total.add(st)
				if err != nil && first == nil {
					first = err
					cancel()
				}
				mu.Unlock()
				prog.add(0, true)
			}
		})
	}
	for _, f := range files {
		if ctx.Err() != nil {
			break
		}
		jobs <- f
	}
	close(jobs)
	wg.Wait()
	if first != nil {
		return total, first
	}
	if err := ctx.Err(); err != nil {
		return total, err
	}
	p.report(prog.get())
	return total, nil
}

// progress is a Progress that workers add to.
type progress struct {
	mu sync.Mutex
	Progress
}

// add counts bytes sent and, with file, a file done; it returns the new count.
func (pr *progress) add(bytes int64, file bool) Progress {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.BytesDone += bytes
	if file {
		pr.FilesDone++
	}
	return pr.Progress
}

func (pr *progress) get() Progress { return pr.add(0, false) }

// PushFile sends what one file under the root has that the store does not.
func (p *Pusher) PushFile(ctx context.Context, path string) (Stats, error) {
	p.mu.Lock()
	loaded := p.loaded
	p.mu.Unlock()
	if !loaded {
		if err := p.load(ctx); err != nil {
			return Stats{}, err
		}
	}
	return p.pushFile(ctx, path, nil)
}

// rel returns path under the root, slash-separated, and whether it can be pushed.
func (p *Pusher) rel(path string) (string, bool) {
	r, err := filepath.Rel(p.opt.Root, path)
	if err != nil || strings.HasPrefix(r, "..") {
		return "", false
	}
	r = filepath.ToSlash(r)
	return r, validName(r)
}

// lock takes the lock of one file's pushes.
func (p *Pusher) lock(rel string) func() {
	p.mu.Lock()
	m := p.files[rel]
	if m == nil {
		m = &sync.Mutex{}
		p.files[rel] = m
	}
	p.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// pushFile pushes one file; a failure of the file alone is in the Stats,
// a failure of the store is returned.
func (p *Pusher) pushFile(ctx context.Context, path string, prog *progress) (Stats, error) {
	st := Stats{Files: 1}
	rel, ok := p.rel(path)
	if !ok {
		st.Failed = map[string]error{path: errors.New("its name is not UTF-8, or it is outside the root")}
		return st, nil
	}
	defer p.lock(rel)()
	err := p.send(ctx, path, rel, &st, prog)
	if errors.Is(err, ErrMoved) {
		// Another push of this machine wrote meanwhile: read the rows again, once.
		if err = p.load(ctx); err == nil {
			err = p.send(ctx, path, rel, &st, prog)
		}
	}
	var fe *fileError
	if errors.As(err, &fe) {
		if errors.Is(fe.err, os.ErrNotExist) {
			return st, nil // gone meanwhile: nothing to send
		}
		st.Failed = map[string]error{path: fe.err}
		return st, nil
	}
	if errors.Is(err, ErrMoved) {
		st.Failed = map[string]error{path: err}
		return st, nil
	}
	return st, err
}

// fileError is a failure to read the file being pushed (not the store's).
type fileError struct{ err error }

func (e *fileError) Error() string { return e.err.Error() }
func (e *fileError) Unwrap() error { return e.err }

// send sends what path (rel under the root) has past what the store holds.
func (p *Pusher) send(ctx context.Context, path, rel string, st *Stats, prog *progress) error {
	f, err := os.Open(path)
	if err != nil {
		return &fileError{err}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return &fileError{err}
	}
	if !fi.Mode().IsRegular() {
		return &fileError{errors.New("not a regular file")}
	}
	size := fi.Size()
	p.mu.Lock()
	row, held := p.rows[rel]
	p.mu.Unlock()
	// Go on from what the store holds when the file still begins with
	// it; else send it whole, as a new generation.
	from, off, gen, prev := int64(0), int64(0), int64(0), row.Gen
	if held && row.Redact == p.opt.Redact && row.Consumed <= size {
		head, tail, err := stamp(f, row.Consumed)
		if err != nil {
			return &fileError{err}
		}
		if head == row.Head && tail == row.Tail {
			from, off, gen = row.Consumed, row.Sent, row.Gen
		}
	}
	if gen == 0 {
		gen = newGen(prev)
		if held {
			st.Rewritten++
		}
	}
	if from == size {
		return nil
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, from, size-from), 64<<10)
	buf := make([]byte, 0, min(p.opt.Chunk, int(size-from))+1)
	consumed := from
	changed := false
	flush := func(upto int64) error {
		if len(buf) == 0 {
			return nil
		}
		if err := p.before(); err != nil {
			return err
		}
		head, tail, err := stamp(f, upto)
		if err != nil {
			return &fileError{err}
		}
		row := File{Machine: p.opt.Machine, Path: rel, Gen: gen, Consumed: upto, Head: head, Tail: tail, Redact: p.opt.Redact}
		c := &Chunk{File: row, Off: off, Data: buf}
		if off == 0 {
			c.PrevGen = prev
		}
		id, err := p.st.PushChunk(ctx, c)
		if err != nil {
			return err
		}
		row.ID, row.Sent = id, off+int64(len(buf))
		p.mu.Lock()
		p.rows[rel] = row
		p.mu.Unlock()
		if !changed {
			st.Changed++
			changed = true
		}
		st.Chunks++
		st.Bytes += upto - consumed
		st.Sent += int64(len(buf))
		if prog != nil {
			p.report(prog.add(upto-consumed, false))
		}
		off, consumed = row.Sent, upto
		buf = buf[:0]
		return nil
	}
	at := from
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the reader's buffer: read it whole.
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err == io.EOF {
			break // a line without its newline yet: the next push sends it
		}
		if err != nil {
			return &fileError{err}
		}
		n := int64(len(line))
		if len(buf) > 0 && len(buf)+len(line) > p.opt.Chunk {
			if err := flush(at); err != nil {
				return err
			}
		}
		if p.opt.Redact == RedactSecrets {
			red, rules := share.RedactLine(line[:len(line)-1])
			for _, rule := range rules {
				if st.Redacted == nil {
					st.Redacted = map[string]int{}
				}
				st.Redacted[rule]++
			}
			buf = append(append(buf, red...), '\n')
		} else {
			buf = append(buf, line...)
		}
		at += n
	}
	return flush(at)
}

// before calls Options.BeforeChunk, counting the chunk.
func (p *Pusher) before() error {
	p.mu.Lock()
	n := p.chunks
	p.chunks++
	p.mu.Unlock()
	if p.opt.BeforeChunk != nil {
		return p.opt.BeforeChunk(n)
	}
	return nil
}

func (p *Pusher) report(pr Progress) {
	if p.opt.Progress != nil {
		p.opt.Progress(pr)
	}
}

// stamp returns the hashes of the first and last bytes of f's first n
// bytes (as the store stamps a file).
func stamp(f io.ReaderAt, n int64) (head, tail int64, err error) {
	st, err := store.StampAt(f, n, time.Unix(0, 0)) // (the time is not hashed)
	return st.Head, st.Tail, err
}

// newGen returns a new generation number: random, positive, not prev.
// Random rather than counted, so that a team server's mirror never takes
// a store made again from scratch for the one it copied.
func newGen(prev int64) int64 {
	for {
		var b [8]byte
		rand.Read(b[:])
		if g := int64(binary.LittleEndian.Uint64(b[:]) >> 1); g != 0 && g != prev {
			return g
		}
	}
}
