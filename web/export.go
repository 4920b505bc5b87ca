package web

// Sharing a branch: the path from the root to an entry as a JSONL session
// file (share.Layout, as pi's fork lays it out) or as one offline HTML
// page (views.ExportPage), redacted first when asked, downloaded or saved
// next to the session.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
	"sync"
	"unicode"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/share"
	"github.com/piweb/piweb/views"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// exportReq is what to export: the branch ending at leaf ("" for the session's leaf), in which format, redacted how.
type exportReq struct {
	leaf   string
	format string // "jsonl" or "html"
	whole  bool   // the whole session, with its tree (html only), not one branch
	red    share.Redact
	page   int // entries an HTML page draws at once; 0 for exportPage (tests make it small)
}

// exportQuery checks an export's parameters; redact values may also be comma-separated lists.
func exportQuery(leaf, format string, redact []string) (exportReq, error) {
	q := exportReq{leaf: leaf, format: strings.ToLower(format)}
	switch q.format {
	case "":
		q.format = "jsonl"
	case "jsonl", "html":
	case "html-session":
		q.format, q.whole = "html", true
	default:
		return q, errBadRequest(fmt.Sprintf("Unknown export format %q: use jsonl, html or html-session.", format), nil)
	}
	for _, list := range redact {
		for _, r := range strings.Split(list, ",") {
			switch strings.ToLower(strings.TrimSpace(r)) {
			case "":
			case "secrets":
				q.red.Secrets = true
			case "thinking":
				q.red.Thinking = true
			case "tools", "tool-output", "tooloutput":
				q.red.ToolOutput = true
			default:
				return q, errBadRequest(fmt.Sprintf("Unknown redaction %q: use secrets, thinking or tools.", r), nil)
			}
		}
	}
	return q, nil
}

// exportFile is an export ready to send or save.
type exportFile struct {
	name string // a file name for it
	mime string
	data []byte
	// write, when set instead of data, writes the export: a long branch's
	// page streams a page of entries at a time, outside the library's lock.
	write func(ctx context.Context, w io.Writer) error
	spill string // a temporary file write reads and removes; removed by done when write is not called
}

// done removes what the export left behind when it was not written.
func (f *exportFile) done() {
	if f.spill != "" {
		os.Remove(f.spill)
	}
}

// export answers GET /api/sessions/:key/export and /s/:key/export with the branch as a download.
func (s *Server) export(c echo.Context) error {
	if c.QueryParam("save") != "" {
		return &pageError{status: http.StatusMethodNotAllowed, title: "Saving needs POST",
			msg: `Saving an export writes a file, so it is a POST: send POST /api/sessions/ID/export with a JSON body {"leaf", "format", "redact"}. GET only downloads.`}
	}
	q, err := exportQuery(c.QueryParam("leaf"), c.QueryParam("format"), c.QueryParams()["redact"])
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	select {
	case s.exports <- struct{}{}:
		defer func() { <-s.exports }()
	default:
		return errBusy
	}
	f, err := s.exported(ctx, sessionKey(c), q)
	if err != nil {
		return err
	}
	defer f.done()
	h := c.Response().Header()
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.name}))
	h.Set("Cache-Control", "no-store")
	h.Set(echo.HeaderContentType, f.mime)
	c.Response().WriteHeader(http.StatusOK)
	// A client that reads nothing for Options.WriteIdle is dropped, and
	// its export slot let go.
	out := newIdleWriter(c.Response(), s.opt.WriteIdle)
	if f.write == nil {
		_, err = out.Write(f.data)
	} else {
		err = f.write(ctx, out)
	}
	switch {
	case out.dropped():
		s.log.Warn("a client read nothing of an export for a while: dropped", "key", sessionKey(c), "idle", s.opt.WriteIdle)
	case err != nil && ctx.Err() == nil:
		s.log.Error("export stopped half way", "key", sessionKey(c), "err", err) // the status is sent: the page is cut short
	case err == nil:
		out.done()
	}
	return nil
}

// saveExport writes the export next to the session, under a new name, and
// returns its path (a saved JSONL file is a session of its own: the library
// lists it at once).
func (s *Server) saveExport(key string, q exportReq) (string, error) {
	select {
	case s.exports <- struct{}{}:
		defer func() { <-s.exports }()
	default:
		return "", errBusy
	}
	ctx := context.Background()
	f, err := s.exported(ctx, key, q)
	if err != nil {
		return "", err
	}
	defer f.done()
	return s.lib.SaveBesideTo(key, f.name, func(w io.Writer) error { // drawn into the file, never held whole
		if f.write == nil {
			_, err := w.Write(f.data)
			return err
		}
		return f.write(ctx, w)
	})
}

// errBusy refuses heavy work while as much as piweb allows is running.
var errBusy = &pageError{status: http.StatusServiceUnavailable, title: "Busy",
	msg: "piweb is building as many exports as it allows at once. Try again in a few seconds."}

// exported builds the export of session id. Callers hold one of the
// Options.Exports slots (s.exports) while they build and send it.
func (s *Server) exported(ctx context.Context, id string, q exportReq) (exportFile, error) {
	var f exportFile
	err := s.view(id, func(ss *sessions.Session, _ *sessions.Reader) error {
		if strings.HasPrefix(q.leaf, "~") {
			return errNoEntry(id, q.leaf) // an entry without id cannot end a branch pi can read
		}
		var b *share.Layout
		var err error
		spill := "" // the branch's (or session's) lines in a temporary file, for its HTML page
		switch {
		case q.whole:
			// As a branch's page below: drawn from the redacted lines, spilled.
			spill, err = spillTo(ctx, func(w io.Writer) error {
				var err error
				b, err = share.WholeTo(w, ss, q.red)
				return err
			})
		case q.format == "jsonl":
			b, err = share.BranchTo(io.Discard, ss, q.leaf, q.red) // its name and leaf; Export writes the lines
		default:
			// The page is drawn from the branch as written (redacted), not from
			// the source, so nothing redacted can reach it; from a file, so the
			// export holds an index of the lines, never the lines themselves.
			spill, b, err = spillBranch(ctx, ss, q)
		}
		if err != nil {
			return err
		}
		base := slug(share.Title(ss, b, q.red)) + "-" + slug(short(b.Leaf)) // ids come from the file: no "/" or ".." may reach a name
		if q.whole {
			base = slug(share.Title(ss, b, q.red)) + "-session"
		}
		if q.red != (share.Redact{}) {
			base += "-redacted"
		}
		if q.format == "jsonl" {
			// pi's /export layout, which pi's /import takes; spilled to a
			// temporary file under the lock and sent after it.
			f.name, f.mime = base+".jsonl", "application/x-ndjson; charset=utf-8"
			f.spill, err = spillTo(ctx, func(w io.Writer) error { return share.ExportTo(w, ss, q.leaf, q.red) })
			if err != nil {
				return err
			}
			file := f.spill
			f.write = func(_ context.Context, w io.Writer) error {
				defer os.Remove(file)
				in, err := os.Open(file)
				if err != nil {
					return err
				}
				defer in.Close()
				_, err = io.Copy(w, in)
				return err
			}
			return nil
		}
		f.name, f.mime = base+".html", echo.MIMETextHTMLCharsetUTF8
		// The page is drawn from the spilled lines after the library's lock is let go.
		v := views.ExportView{SessionID: ss.Header.ID, Cwd: ss.Header.Cwd, Created: ss.Meta().Created,
			Title: oneLine(share.Title(ss, b, q.red), 120)}
		f.write = func(ctx context.Context, w io.Writer) error { return s.exportHTML(ctx, v, b, spill, q.red, w) }
		if q.whole {
			page := cmp.Or(q.page, exportPage)
			f.write = func(ctx context.Context, w io.Writer) error {
				return s.exportSessionHTML(ctx, v, b, spill, q.red, page, w)
			}
		}
		f.spill = spill
		return nil
	})
	if err != nil && f.spill != "" {
		os.Remove(f.spill)
		f.spill = ""
	}
	return f, err
}

// spillBranch writes the branch q names to a temporary file and returns
// its path with the branch (which holds no lines).
func spillBranch(ctx context.Context, ss *sessions.Session, q exportReq) (string, *share.Layout, error) {
	var b *share.Layout
	file, err := spillTo(ctx, func(w io.Writer) error {
		var err error
		b, err = share.BranchTo(w, ss, q.leaf, q.red)
		return err
	})
	return file, b, err
}

// spillTo writes through fn into a new temporary file and returns its path
// (nothing is left behind when it fails). Once ctx is done, writes fail
// with its error, so a cancelled export stops writing.
func spillTo(ctx context.Context, fn func(io.Writer) error) (string, error) {
	tmp, err := os.CreateTemp("", "piweb-export-*.jsonl")
	if err != nil {
		return "", err
	}
	bw := bufio.NewWriterSize(tmp, 1<<20)
	err = fn(ctxWriter{ctx, bw})
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}

// ctxWriter is w failing with ctx's error once ctx is done.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// exportHTML writes branch b as a self-contained page, v holding what the
// source session tells. The entries are drawn a page at a time, so the
// export holds the branch's lines but never all of its HTML.
func (s *Server) exportHTML(ctx context.Context, v views.ExportView, b *share.Layout, file string, red share.Redact, w io.Writer) error {
	defer os.Remove(file)
	bs, err := sessions.Load(file)
	if err != nil {
		return err
	}
	leaf, ok := bs.Lookup(b.Leaf)
	if !ok {
		return fmt.Errorf("export: the branch lost its leaf %q", b.Leaf)
	}
	r, err := bs.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	path := bs.Path(leaf)
	bld := &builder{md: exportMarkdown(), s: bs, home: s.opt.Home}
	m := bs.Meta()
	v.Name, v.Leaf, v.Models, v.Exported, v.Entries, v.Messages, v.Tokens, v.Cost = b.Name, b.Leaf, m.Models, views.Now(), len(path), m.Messages, m.Tokens, m.Cost
	tree, total, err := s.shareTree(bs, r, leaf, pathMarks(bs, leaf)) // the branch's rows beside it, as pi's /tree shows them
	if err != nil {
		return err
	}
	v.Tree = tree
	if total > len(tree) {
		v.TreeCut = fmt.Sprintf("The tree shows its first %d rows of %d.", len(tree), total)
	}
	v.Body = templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		shown := 0
		for start := 0; start < len(path); {
			if err := ctx.Err(); err != nil {
				return err
			}
			end := min(start+exportPage, len(path))
			for end < len(path) && isToolResult(&bs.Entries[path[end]]) {
				end++ // a call's results stay on its page
			}
			items, err := bld.pathItems(r, path[start:end])
			if err != nil {
				return err
			}
			for k := range items {
				items[k].Export = true
				if err := views.ItemView(items[k]).Render(ctx, w); err != nil {
					return err
				}
			}
			shown += len(items)
			start = end
		}
		if shown == 0 {
			_, err := io.WriteString(w, `<p class="empty">This branch has no entries to show.</p>`)
			return err
		}
		return nil
	})
	return renderExportTo(ctx, v, red, w)
}

// exportPage is how many entries an export draws at once.
const exportPage = 200

// renderExportTo notes the redactions on an export page and renders it to w.
func renderExportTo(ctx context.Context, v views.ExportView, red share.Redact, w io.Writer) error {
	if red.Secrets {
		v.Cwd = "" // folder names tell who and what; the JSONL keeps its cwd, which pi needs
		v.Redacted = append(v.Redacted, "secrets")
	}
	if red.Thinking {
		v.Redacted = append(v.Redacted, "thinking")
	}
	if red.ToolOutput {
		v.Redacted = append(v.Redacted, "tool output")
	}
	return views.ExportPage(v).Render(ctx, w)
}

// exportMarkdown is the markdown pipeline of the session page with one
// change: images become links, since an exported page loads nothing.
var exportMarkdown = sync.OnceValue(func() *markdown {
	m := newMarkdown()
	m.md = goldmark.New(goldmark.WithExtensions(extension.GFM),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(imageLinks{}, 100))))
	return m
})

// imageLinks renders markdown images as links to them.
type imageLinks struct{}

func (imageLinks) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindImage, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		img := n.(*ast.Image)
		var alt bytes.Buffer
		_ = ast.Walk(img, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
			if t, ok := c.(*ast.Text); ok && entering {
				alt.Write(t.Value(src))
			}
			return ast.WalkContinue, nil
		})
		_, _ = w.WriteString(`<a href="`)
		_, _ = w.Write(util.EscapeHTML(util.URLEscape(img.Destination, true)))
		_, _ = w.WriteString(`">[image: `)
		_, _ = w.Write(util.EscapeHTML(alt.Bytes()))
		_, _ = w.WriteString(`]</a>`)
		return ast.WalkSkipChildren, nil
	})
}

// slug makes a file-name-safe lowercase word run of s, at most 40 bytes ("session" when empty).
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if b.Len() >= 40 {
			break
		}
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	if b.Len() == 0 {
		return "session"
	}
	return b.String()
}

// short returns the first 8 bytes of an id.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// redactions answers GET /s/:key/redactions?leaf=&redact=…: what sharing
// the branch with those redactions removes, for the share form to show
// before anything is downloaded or saved.
func (s *Server) redactions(c echo.Context) error {
	key := sessionKey(c)
	q, err := exportQuery(c.QueryParam("leaf"), c.QueryParam("format"), c.QueryParams()["redact"])
	if err != nil {
		return err
	}
	p := views.RedactionPreview{Secrets: q.red.Secrets}
	var b *share.Layout
	err = s.view(key, func(ss *sessions.Session, r *sessions.Reader) error {
		if q.red.Secrets {
			var err error
			if q.whole {
				b, err = share.Whole(ss, share.Redact{})
			} else {
				b, err = share.Branch(ss, q.leaf, share.Redact{})
			}
			if err != nil {
				return err
			}
		}
		if q.red.Thinking || q.red.ToolOutput {
			leaf := ss.Leaf()
			if q.leaf != "" {
				leaf, _ = resolve(ss, q.leaf)
			}
			entries := ss.Path(leaf)
			if q.whole {
				entries = make([]int, len(ss.Entries))
				for i := range entries {
					entries[i] = i
				}
			}
			for _, i := range entries {
				e := &ss.Entries[i]
				if e.Type != sessions.TypeMessage {
					continue
				}
				switch {
				case q.red.ToolOutput && (e.Role == sessions.RoleToolResult || e.Role == sessions.RoleBash):
					p.Tools++
				case q.red.Thinking && e.Role == sessions.RoleAssistant:
					b, err := r.Body(i)
					if err != nil {
						return err
					}
					for _, bl := range b.Msg.Content.Blocks() {
						if bl.Type == sessions.BlockThinking {
							p.Thinking++
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if b != nil { // looking for secrets takes a while: outside the library's lock
		found := b.Secrets()
		entries := map[string]bool{}
		for _, f := range found {
			entries[f.Entry] = true
			p.Found = append(p.Found, views.FoundSecret{Entry: f.Entry, Rule: f.Rule, Masked: f.Masked,
				URL: views.StateURL(key, views.TreeState{Target: f.Entry})})
		}
		p.Entries, p.Shown = len(entries), min(len(found), 50)
	}
	return respond(c, views.RedactionPreviewView(p))
}
