package push

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"
)

// readAll returns the bytes of generation gen of file id from offset from.
func readAll(t *testing.T, s Table, id, gen, from int64) string {
	t.Helper()
	var b bytes.Buffer
	next := from
	if err := s.Chunks(ctx, id, gen, from, func(off int64, data []byte) error {
		if off != next {
			t.Fatalf("chunk at %d, want %d", off, next)
		}
		b.Write(data)
		next += int64(len(data))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestPushChunks(t *testing.T) {
	engines(t, func(t *testing.T, s Table) {
		row := File{Machine: "laptop", Path: "p/a.jsonl", Gen: 7, Consumed: 4, Head: 1, Tail: 2}
		id, err := s.PushChunk(ctx, &Chunk{File: row, Data: []byte("one\n")})
		if err != nil {
			t.Fatal(err)
		}
		// The same chunk again (a push that did not hear its commit): refused, nothing doubled.
		if _, err := s.PushChunk(ctx, &Chunk{File: row, Data: []byte("one\n")}); !errors.Is(err, ErrMoved) {
			t.Fatalf("first chunk twice: %v, want ErrMoved", err)
		}
		row.Consumed = 12
		for _, c := range []string{"two\n", "three\n"} {
			if _, err := s.PushChunk(ctx, &Chunk{File: row, Off: map[string]int64{"two\n": 4, "three\n": 8}[c], Data: []byte(c)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.PushChunk(ctx, &Chunk{File: row, Off: 4, Data: []byte("two\n")}); !errors.Is(err, ErrMoved) {
			t.Fatalf("a chunk at an old offset: %v, want ErrMoved", err)
		}
		files, err := s.PushedFiles(ctx, "laptop")
		if err != nil || len(files) != 1 {
			t.Fatalf("%v %v", files, err)
		}
		if f := files[0]; f.ID != id || f.Gen != 7 || f.Sent != 14 || f.Consumed != 12 || f.Pushed == 0 {
			t.Fatalf("row %+v", f)
		}
		for from, want := range map[int64]string{0: "one\ntwo\nthree\n", 2: "e\ntwo\nthree\n", 4: "two\nthree\n", 9: "hree\n", 14: ""} {
			if got := readAll(t, s, id, 7, from); got != want {
				t.Errorf("from %d: %q, want %q", from, got, want)
			}
		}
		// Another generation replaces the old one, chunks and all; one
		// that does not say which it replaces is refused.
		row2 := File{Machine: "laptop", Path: "p/a.jsonl", Gen: 9, Consumed: 4}
		if _, err := s.PushChunk(ctx, &Chunk{File: row2, Data: []byte("new\n"), PrevGen: 8}); !errors.Is(err, ErrMoved) {
			t.Fatalf("wrong previous generation: %v", err)
		}
		if _, err := s.PushChunk(ctx, &Chunk{File: row2, Data: []byte("new\n"), PrevGen: 7}); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, s, id, 9, 0); got != "new\n" {
			t.Errorf("new generation: %q", got)
		}
		if got := readAll(t, s, id, 7, 0); got != "" {
			t.Errorf("old generation still held: %q", got)
		}
		// Other machines' files are their own; none named lists all.
		if _, err := s.PushChunk(ctx, &Chunk{File: File{Machine: "desk", Path: "p/a.jsonl", Gen: 1, Consumed: 2}, Data: []byte("x\n")}); err != nil {
			t.Fatal(err)
		}
		all, err := s.PushedFiles(ctx)
		if err != nil || len(all) != 2 {
			t.Fatalf("all: %v %v", all, err)
		}
		f, ok, err := s.PushedFileByID(ctx, all[1].ID)
		if err != nil || !ok || f.Machine != "desk" {
			t.Fatalf("by id: %+v %v %v", f, ok, err)
		}
		if _, ok, err := s.PushedFileByID(ctx, 12345); ok || err != nil {
			t.Fatalf("missing id: %v %v", ok, err)
		}
		if _, err := s.PushChunk(ctx, &Chunk{File: File{Machine: "a\x00b", Path: "x.jsonl", Gen: 1}, Data: []byte("x\n")}); err == nil {
			t.Error("a NUL in a machine's name was taken")
		}
	})
}

// TestChunksMany reads a file of more chunks than one query gives.
func TestChunksMany(t *testing.T) {
	engines(t, func(t *testing.T, s Table) {
		var want bytes.Buffer
		row := File{Machine: "m", Path: "f.jsonl", Gen: 1}
		var id int64
		for i := range 3*chunksPerQuery + 2 {
			line := bytes.Repeat([]byte{'a' + byte(i%26)}, 10+i)
			line = append(line, '\n')
			row.Consumed += int64(len(line))
			var err error
			if id, err = s.PushChunk(ctx, &Chunk{File: row, Off: int64(want.Len()), Data: line}); err != nil {
				t.Fatal(err)
			}
			want.Write(line)
		}
		if got := readAll(t, s, id, 1, 0); got != want.String() {
			t.Fatalf("got %d bytes, want %d", len(got), want.Len())
		}
		if got := readAll(t, s, id, 1, 100); got != want.String()[100:] {
			t.Fatalf("from 100: got %d bytes, want %d", len(got), want.Len()-100)
		}
	})
}

// TestListen hears each push as it commits.
func TestListen(t *testing.T) {
	s, _ := postgres(t)
	lctx, cancel := context.WithCancel(ctx)
	ready := make(chan struct{})
	heard := make(chan int64, 10)
	done := make(chan error, 1)
	go func() { done <- s.Listen(lctx, func() { close(ready) }, func(id int64) { heard <- id }) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	id, err := s.PushChunk(ctx, &Chunk{File: File{Machine: "m", Path: "f.jsonl", Gen: 1, Consumed: 2}, Data: []byte("x\n")})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-heard:
		if got != id {
			t.Fatalf("heard %d, want %d", got, id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notice within 10 s")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("listen ended with %v", err)
	}
	// The chunks are compressed with lz4 (the test server has it).
	var how string
	if err := s.Use(ctx, func(db *sql.DB) error {
		return db.QueryRowContext(ctx, `SELECT attcompression FROM pg_attribute WHERE attrelid = 'push_chunks'::regclass AND attname = 'data'`).Scan(&how)
	}); err != nil || how != "l" {
		t.Errorf("push_chunks.data compression %q (%v), want l (lz4)", how, err)
	}
}
