package sessiontest

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// SmallVersion must change whenever WriteSmallChain's output changes: it
// names the cached benchmark file.
const SmallVersion = 1

// WriteSmallChain writes a session of n small entries (about 636 bytes a
// line) in one chain, as /work/shared/bench/mkroot.py's "chain" writes them
// (with Python's json.dumps, so a space after each ',' and ':'): user,
// assistant and read-tool result messages in turn, of 5 to 60 words of
// short text. It is the shape of a long session of short turns, where the
// per-entry costs weigh most.
func WriteSmallChain(w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the cache key handler refactor test build error fix path branch session tree model")
	text := func() string {
		k := 5 + rng.IntN(56)
		var b strings.Builder
		for j := range k {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String()
	}
	fmt.Fprintf(bw, `{"type": "session", "version": 3, "id": "cd613e30-d8f1-6adf-91b7-584a2265b1f5", "timestamp": "2026-08-24T10:00:00.000Z", "cwd": "/home/user/chain"}`+"\n")
	parent := "null"
	for i := range n {
		id := fmt.Sprintf("%08x", (2654435761+i*40503)&0xffffffff)
		ts := fmt.Sprintf("2026-08-24T%02d:%02d:%02d.000Z", 10+(i/3600)%12, (i/60)%60, i%60)
		at := strconv.Itoa(1787565600000 + i)
		var msg string
		switch i % 3 {
		case 0:
			msg = `{"role": "user", "content": ` + strconv.Quote(text()) + `, "timestamp": ` + at + `}`
		case 1:
			msg = `{"role": "assistant", "content": [{"type": "text", "text": ` + strconv.Quote(text()) + `}], "api": "anthropic-messages", ` +
				`"provider": "anthropic", "model": "claude-sonnet-4-6", "usage": {"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 120, ` +
				`"cost": {"input": 0.0003, "output": 0.0003, "cacheRead": 0, "cacheWrite": 0, "total": 0.0006}}, "stopReason": "stop", "timestamp": ` + at + `}`
		default:
			msg = `{"role": "toolResult", "toolCallId": "call_` + strconv.Itoa(i) + `", "toolName": "read", "content": [{"type": "text", "text": ` +
				strconv.Quote(strings.Repeat(text(), 3)) + `}], "isError": false, "timestamp": ` + at + `}`
		}
		fmt.Fprintf(bw, `{"type": "message", "id": "%s", "parentId": %s, "timestamp": "%s", "message": %s}`+"\n", id, parent, ts, msg)
		parent = `"` + id + `"`
	}
	return bw.Flush()
}

// SmallChainFile returns a 100k-entry WriteSmallChain session (about 63 MB,
// cached in the temp dir for later runs) and its size.
func SmallChainFile(b testing.TB) (string, int64) {
	b.Helper()
	p := filepath.Join(os.TempDir(), fmt.Sprintf("piweb-bench-smallchain%d-v%d.jsonl", ChainEntries, SmallVersion))
	if st, err := os.Stat(p); err == nil {
		return p, st.Size()
	}
	tmp := fmt.Sprintf("%s.tmp%d", p, os.Getpid())
	f, err := os.Create(tmp)
	if err == nil {
		err = WriteSmallChain(f, ChainEntries)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		b.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	return p, st.Size()
}
