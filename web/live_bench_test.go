package web

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/watcher"
)

// liveRig is a server over a watched root for the live benchmarks.
type liveRig struct {
	url, key, file, leaf, ver string
	ctx                       context.Context
}

// newLiveRig serves the demo root, with the 100k chain added when chain is
// set (key names that session then), watched with the default debounce.
func newLiveRig(b *testing.B, chain bool) *liveRig {
	if chain {
		return newChainRig(b, sessiontest.ChainEntries)
	}
	return newChainRig(b, 0)
}

// newChainRig is newLiveRig with a single chain of n entries (none for 0),
// generated once into the temp dir.
func newChainRig(b *testing.B, n int) *liveRig {
	root := demoRoot(b)
	key := mainID
	chain := n > 0
	if chain {
		src, _ := sessiontest.ChainFile(b)
		if n != sessiontest.ChainEntries {
			src = filepath.Join(os.TempDir(), fmt.Sprintf("piweb-bench-chain%d-v%d.jsonl", n, sessiontest.Version))
			if _, err := os.Stat(src); err != nil {
				if _, err := sessiontest.WriteFile(src, 100, n, sessiontest.Options{Chain: true, Scale: sessiontest.ChainScale}); err != nil {
					b.Fatal(err)
				}
			}
		}
		data, err := os.ReadFile(src)
		if err != nil {
			b.Fatal(err)
		}
		dst := filepath.Join(root, "--home-dev-chain--", "2026-01-01T00-00-00-000Z_chain.jsonl")
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	lib := openLib(b, root)
	if chain {
		for _, m := range lib.List() {
			if m.Entries == n {
				key = m.Key
			}
		}
	}
	w, err := watcher.New(lib, watcher.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go w.Run(ctx)
	srv := newServer(b, lib, nil)
	ts := httptest.NewServer(srv.Handler())
	b.Cleanup(func() { cancel(); srv.Close(); ts.Close() })
	rig := &liveRig{url: ts.URL, key: key, ctx: ctx}
	rig.file, _ = lib.File(key)
	lib.View(key, func(s *sessions.Session) error { rig.leaf, rig.ver = s.Entries[s.Leaf()].ID, version(s); return nil })
	return rig
}

// stream opens the session's live stream and waits for its hello; the
// returned function waits for the next event of a name.
func (rig *liveRig) stream(b *testing.B) func(name string) {
	events, _ := openStream(b, rig.ctx, fmt.Sprintf("%s/s/%s/events?v=%s", rig.url, rig.key, rig.ver))
	wait := func(name string) {
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					b.Fatal("the stream closed")
				}
				if ev.Name == name {
					return
				}
			case <-time.After(60 * time.Second):
				b.Fatalf("no %s event", name)
			}
		}
	}
	wait("hello")
	return wait
}

// appendTurn appends one user message under the leaf.
func (rig *liveRig) appendTurn(b *testing.B, n int) {
	id := fmt.Sprintf("live%06d", n)
	f, err := os.OpenFile(rig.file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	f.WriteString(sessiontest.User(id, rig.leaf, n, "ping "+id) + "\n")
	f.Close()
	rig.leaf = id
}

// BenchmarkStreams: one append to the 100k chain with 1 and with 50 pages
// open on it, until every page has its rows; the 50 share the work, so they
// cost about what one does.
func BenchmarkStreams(b *testing.B) {
	for _, n := range []int{1, 50} {
		b.Run(fmt.Sprintf("pages-%d", n), func(b *testing.B) {
			rig := newLiveRig(b, true)
			var waits []func(string)
			for range n {
				waits = append(waits, rig.stream(b))
			}
			cpu := sessiontest.ReportCPU(b)
			k := 0
			for b.Loop() {
				k++
				rig.appendTurn(b, k)
				for _, w := range waits {
					w("delta")
				}
			}
			cpu()
		})
	}
}

// BenchmarkLiveLatency measures how long an append takes to reach an open
// page: from the write to the stream's "delta" event, through fsnotify, the
// watcher (default debounce), the library and the page's layout. On the demo's
// main session and on the 100k chain; p50 and p95 per append.
func BenchmarkLiveLatency(b *testing.B) {
	for _, c := range []struct{ name, key string }{{"demo", mainID}, {"chain100k", "chain"}} {
		b.Run(c.name, func(b *testing.B) {
			root := demoRoot(b)
			key := c.key
			if c.name == "chain100k" {
				src, _ := sessiontest.ChainFile(b)
				data, err := os.ReadFile(src)
				if err != nil {
					b.Fatal(err)
				}
				dst := filepath.Join(root, "--home-dev-chain--", "2026-01-01T00-00-00-000Z_chain.jsonl")
				os.MkdirAll(filepath.Dir(dst), 0o755)
				if err := os.WriteFile(dst, data, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			lib := openLib(b, root)
			if c.name == "chain100k" {
				for _, m := range lib.List() {
					if m.Entries == sessiontest.ChainEntries {
						key = m.Key
					}
				}
			}
			w, err := watcher.New(lib, watcher.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go w.Run(ctx)
			srv := newServer(b, lib, nil)
			ts := httptest.NewServer(srv.Handler())
			defer func() { srv.Close(); ts.Close() }()
			file, _ := lib.File(key)
			leaf := ""
			lib.View(key, func(s *sessions.Session) error { leaf = s.Entries[s.Leaf()].ID; return nil })
			ver := ""
			lib.View(key, func(s *sessions.Session) error { ver = version(s); return nil })
			events, _ := openStream(b, ctx, fmt.Sprintf("%s/s/%s/events?v=%s", ts.URL, key, ver))
			waitFor := func(name string) {
				for {
					select {
					case ev, ok := <-events:
						if !ok {
							b.Fatal("the stream closed")
						}
						if ev.Name == name {
							return
						}
					case <-time.After(30 * time.Second):
						b.Fatalf("no %s event", name)
					}
				}
			}
			waitFor("hello")
			var lat []time.Duration
			n := 0
			for b.Loop() {
				n++
				id := fmt.Sprintf("live%06d", n)
				line := sessiontest.User(id, leaf, n, "ping "+id) + "\n"
				start := time.Now()
				f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					b.Fatal(err)
				}
				f.WriteString(line)
				f.Close()
				waitFor("delta")
				lat = append(lat, time.Since(start))
				leaf = id
				time.Sleep(150 * time.Millisecond) // let the file go quiet: each append is a first write, as pi's turns are
			}
			slices.Sort(lat)
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
			b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*95/100)]), "p95-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}
