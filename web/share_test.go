package web

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/pitree"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
)

// TestShareTree: the rows a share's sidebar holds give, for each of pi's
// filters, exactly pi's tree under that filter: the same rows in the same
// order, each with the prefix pi draws, and the leaf's row.
func TestShareTree(t *testing.T) {
	root := demoRoot(t)
	keys := []string{mainID, forkID}
	for seed := range int64(3) { // generated sessions: branches, labels, compactions, settings of every kind
		id := fmt.Sprintf("gen%d", seed)
		writeSession(t, root, "--work-generated--", "2026-01-01T00-00-00-000Z_"+id+".jsonl",
			sessiontest.String(seed+1, 400, sessiontest.Options{ID: id}))
		keys = append(keys, id)
	}
	lib := openLib(t, root)
	srv := newServer(t, lib, nil)
	for _, key := range keys {
		err := lib.View(key, func(ss *sessions.Session) error {
			r, err := ss.Open()
			if err != nil {
				return err
			}
			defer r.Close()
			leaf := ss.Leaf()
			tree, total, err := srv.shareTree(ss, r, leaf, nil)
			if err != nil {
				return err
			}
			for _, f := range views.ShareFilters {
				l, err := pitree.New(ss, r, pitree.Options{Leaf: leaf, Home: srv.opt.Home, Filter: pitree.Filter(f.Name)})
				if err != nil {
					return err
				}
				var got, want []string
				for _, row := range tree {
					if !strings.Contains(" "+row.In+" ", " "+f.Key+" ") {
						continue
					}
					pre := row.Prefix
					for _, a := range row.Alt {
						if a.Filter == f.Key {
							pre = a.Prefix
						}
					}
					leafMark := strings.Contains(" "+row.LeafIn+" ", " "+f.Key+" ")
					got = append(got, fmt.Sprintf("%d %q %v", row.Pos, pre, leafMark))
				}
				for i, row := range l.Rows(0, l.Len()) {
					want = append(want, fmt.Sprintf("%d %q %v", row.Pos, row.Prefix(), i == l.Find(leaf)))
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("%s, filter %s: the share's rows\n%s\nwant pi's\n%s", key, f.Name, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if f.Name == "all" && total != len(want) {
					t.Errorf("%s: total %d, want %d", key, total, len(want))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestBrowserShare opens a whole-session share and a branch share as a
// file, as whoever receives one does: piweb's script runs (no CSP
// complaint), the tree's filters show pi's rows with pi's gutters, the
// search narrows the rows to the entries holding its words, and T and O
// open every thinking block and long tool output.
func TestBrowserShare(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	h := newServer(t, lib, nil).Handler()
	dir := t.TempDir()
	ctx, console := browse(t)
	b := browserRun{t, ctx}
	visible := `[...document.querySelectorAll('#share-rows .trow')].filter((r) => r.offsetParent !== null)`
	for _, c := range []struct{ name, query string }{{"whole", "html-session"}, {"branch", "html"}} {
		file := filepath.Join(dir, c.name+".html")
		if err := os.WriteFile(file, get(t, h, "/s/"+mainID+"/export?format="+c.query).Body.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		b.do(c.name+": open", chromedp.EmulateViewport(1440, 900), chromedp.Navigate("file://"+file),
			b.poll("the script ran", `!document.getElementById('share-tools').hidden && document.getElementById('share-status').textContent.includes(' of ')`))
		saveShot(t, ctx, "share-"+c.name+"-1440")
		all := b.eval(`String(document.querySelectorAll('#share-rows .trow').length)`)
		deflt := b.eval(`String(` + visible + `.length)`)
		if deflt == all || !strings.HasPrefix(b.eval(`document.getElementById('share-status').textContent`), deflt+" of ") {
			t.Errorf("%s: the default filter shows %s of %s rows; status %q", c.name, deflt, all, b.eval(`document.getElementById('share-status').textContent`))
		}
		b.do(c.name+": user filter", chromedp.Click(chromedp.CSS(`[data-filter="u"]`)),
			b.poll("user rows only", visible+`.length > 2 && `+visible+`.every((r) => r.classList.contains('k-user'))`),
			// pi's gutters under this filter (the branch of the demo forks at a user message in the whole tree).
			b.poll("the filter's prefixes", `[...document.querySelectorAll('#share-rows .trow[data-pu]')].every((r) => r.querySelector('.pre').textContent === r.dataset.pu)`),
			b.poll("the leaf's row marked", `document.querySelectorAll('#share-rows .here').length === 1 && (' ' + document.querySelector('#share-rows .trow.leaf').dataset.leaf + ' ').includes(' u ')`))
		if c.name == "whole" && b.eval(`String(document.querySelectorAll('#share-rows .trow[data-pu]').length)`) == "0" {
			t.Error("no row of the whole session is drawn otherwise under the user filter: the test checks no prefix")
		}
		b.do(c.name+": all", chromedp.Click(chromedp.CSS(`[data-filter="a"]`)), b.poll("every row", visible+`.length === `+all))
		b.do(c.name+": search", chromedp.Click(chromedp.CSS(`[data-filter="d"]`)), chromedp.Focus("#share-q"), chromedp.KeyEvent("widget"),
			b.poll("rows holding the word", visible+`.length > 0 && `+visible+`.length < 8 && `+visible+`.every((r) => (r.textContent + document.getElementById(r.getAttribute('href').slice(1)).textContent).toLowerCase().includes('widget'))`),
			b.poll("the count says so", `document.getElementById('share-status').textContent.includes('match “widget”')`))
		saveShot(t, ctx, "share-"+c.name+"-search-1440")
		b.do(c.name+": clear", chromedp.KeyEvent("\x1b"), b.poll("all rows back", visible+`.length === `+deflt))
		closedThinking := b.eval(`String(document.querySelectorAll('main details.thinking:not([open])').length)`)
		if closedThinking == "0" {
			t.Fatalf("%s: no thinking block to open", c.name)
		}
		b.do(c.name+": T and O", chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`), chromedp.KeyEvent("t"), chromedp.KeyEvent("o"),
			b.poll("thinking open", `document.querySelectorAll('main details.thinking:not([open])').length === 0`),
			b.poll("tool outputs whole", `document.querySelectorAll('main details.expand').length > 0 && document.querySelectorAll('main details.expand:not([open])').length === 0`),
			b.poll("the buttons say so", `[...document.querySelectorAll('#share-toggles button')].every((b) => b.getAttribute('aria-pressed') === 'true')`))
		b.do(c.name+": T again", chromedp.KeyEvent("t"), b.poll("thinking closed", `document.querySelectorAll('main details.thinking[open]').length === 0`))
		b.do(c.name+": phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate("file://"+file),
			b.poll("the tree folded away", `!document.getElementById('share-tree').open && !document.getElementById('share-tools').hidden`))
		saveShot(t, ctx, "share-"+c.name+"-390")
	}
	checkConsole(t, console)
}
