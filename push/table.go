package push

// The pushed files in the store: the session files other machines send
// (piweb push), kept as the bytes they sent, in chunks, for a team server
// to mirror. Each
// file has one row (its machine, its path under that machine's sessions
// root, its generation, how far it was sent) and its bytes in chunks
// keyed by file, generation and offset. A chunk and its file's counters
// are written in one transaction, and a write that does not continue the
// row as the pusher last saw it is refused (ErrMoved): a push killed
// at any point, or cut off by a restarting server, leaves the row and its
// chunks agreeing, and the next push goes on from there. On PostgreSQL
// each chunk also notifies the channel PushChannel names, which Listen
// follows.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/piweb/piweb/store"
)

// ErrMoved says a pushed file's row is no longer what the pusher
// last read (another push of the same machine's file ran meanwhile):
// nothing was written; read the row again.
var ErrMoved = errors.New("the pushed file changed in the store since it was read (is another push of this machine running?)")

// File is what the store holds of a file pushed from a machine.
type File struct {
	ID      int64
	Machine string
	Path    string // under the machine's sessions root, slash-separated
	// Gen is the generation of the bytes held: another number each time
	// the file was sent again from its start (it was rewritten, not
	// appended to).
	Gen      int64
	Consumed int64 // bytes of the machine's file sent, up to a line's end
	Sent     int64 // bytes held of this generation (not Consumed when lines were redacted)
	Head     int64 // hash of the first bytes of the part consumed
	Tail     int64 // hash of the last bytes of the part consumed
	Redact   string
	Pushed   int64 // when it was last pushed to, Unix ms
}

// Chunk is a piece of a pushed file: the bytes at Off of its generation,
// and the file's row as it is once they are held.
type Chunk struct {
	// File is the row after the chunk: Machine, Path, Gen, Consumed, Head,
	// Tail and Redact as the pusher has them; Sent is Off + len(Data).
	File File
	Off  int64
	Data []byte
	// PrevGen is the generation the row had when the pusher read it (0:
	// no row), for the first chunk of a generation (Off 0), which
	// replaces it.
	PrevGen int64
}

// Table is the store's pushed files (the tables of its schema's step 3).
type Table struct{ *store.DB }

const pushedColumns = `id, machine, path, gen, consumed, sent, head, tail, redact, pushed`

func scanPushed(sc interface{ Scan(...any) error }) (File, error) {
	var f File
	err := sc.Scan(&f.ID, &f.Machine, &f.Path, &f.Gen, &f.Consumed, &f.Sent, &f.Head, &f.Tail, &f.Redact, &f.Pushed)
	return f, err
}

// PushedFiles returns the pushed files of the machines named, or of every
// machine when none is.
func (s Table) PushedFiles(ctx context.Context, machines ...string) ([]File, error) {
	var out []File
	err := s.Use(ctx, func(db *sql.DB) error {
		out = nil
		q, args := `SELECT `+pushedColumns+` FROM push_files`, []any{}
		if len(machines) > 0 {
			q += ` WHERE machine IN (` + store.Marks(len(machines)) + `)`
			for _, m := range machines {
				args = append(args, m)
			}
		}
		rows, err := db.QueryContext(ctx, s.Rebind(q+` ORDER BY id`), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			f, err := scanPushed(rows)
			if err != nil {
				return err
			}
			out = append(out, f)
		}
		return rows.Err()
	})
	return out, err
}

// PushedFileByID returns the pushed file with id, and false when there is none.
func (s Table) PushedFileByID(ctx context.Context, id int64) (File, bool, error) {
	var f File
	found := false
	err := s.Use(ctx, func(db *sql.DB) error {
		var err error
		f, err = scanPushed(db.QueryRowContext(ctx, s.Rebind(`SELECT `+pushedColumns+` FROM push_files WHERE id = ?`), id))
		found = err == nil
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	return f, found, err
}

// PushChunk stores a chunk and its file's new counters in one
// transaction, and returns the file's id. A chunk the store holds already
// is not written twice. The first chunk of a generation (Off 0) replaces
// the generation the pusher read (c.PrevGen) and drops its chunks; any
// other continues the row as it is, at c.Off. A row that moved on
// otherwise is ErrMoved, nothing written.
func (s Table) PushChunk(ctx context.Context, c *Chunk) (int64, error) {
	f := c.File
	f.Sent = c.Off + int64(len(c.Data))
	if !store.ValidText(f.Machine, f.Path, f.Redact) {
		return 0, fmt.Errorf("pushed file %q of %q: names must be UTF-8 without NUL", f.Path, f.Machine)
	}
	f.Pushed = time.Now().UnixMilli()
	var id int64
	err := s.Tx(ctx, func(tx *sql.Tx) error {
		if c.Off == 0 {
			var gen int64
			lock := ""
			if s.Engine() == store.Postgres {
				lock = " FOR UPDATE"
			}
			err := tx.QueryRowContext(ctx, s.Rebind(`SELECT id, gen FROM push_files WHERE machine = ? AND path = ?`+lock), f.Machine, f.Path).Scan(&id, &gen)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				if c.PrevGen != 0 {
					return ErrMoved
				}
				err = tx.QueryRowContext(ctx, s.Rebind(`INSERT INTO push_files (machine, path, gen, consumed, sent, head, tail, redact, pushed)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
					f.Machine, f.Path, f.Gen, f.Consumed, f.Sent, f.Head, f.Tail, f.Redact, f.Pushed).Scan(&id)
				if err != nil {
					return err
				}
			case err != nil:
				return err
			case gen != c.PrevGen:
				return ErrMoved
			default:
				if _, err := tx.ExecContext(ctx, s.Rebind(`UPDATE push_files SET gen = ?, consumed = ?, sent = ?, head = ?, tail = ?,
					redact = ?, pushed = ? WHERE id = ?`), f.Gen, f.Consumed, f.Sent, f.Head, f.Tail, f.Redact, f.Pushed, id); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, s.Rebind(`DELETE FROM push_chunks WHERE file_id = ? AND gen <> ?`), id, f.Gen); err != nil {
					return err
				}
			}
		} else {
			err := tx.QueryRowContext(ctx, s.Rebind(`UPDATE push_files SET consumed = ?, sent = ?, head = ?, tail = ?, pushed = ?
				WHERE machine = ? AND path = ? AND gen = ? AND sent = ? AND redact = ? RETURNING id`),
				f.Consumed, f.Sent, f.Head, f.Tail, f.Pushed, f.Machine, f.Path, f.Gen, c.Off, f.Redact).Scan(&id)
			if errors.Is(err, sql.ErrNoRows) {
				return ErrMoved
			}
			if err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, s.Rebind(`INSERT INTO push_chunks (file_id, gen, off, data) VALUES (?, ?, ?, ?)
			ON CONFLICT (file_id, gen, off) DO NOTHING`), id, f.Gen, c.Off, c.Data); err != nil {
			return err
		}
		if s.Engine() == store.Postgres {
			// Delivered when the transaction commits, and only then.
			if _, err := tx.ExecContext(ctx, `SELECT pg_notify('piweb_push_' || current_schema(), $1)`, strconv.FormatInt(id, 10)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && store.UniqueViolation(err) {
		return 0, ErrMoved // another push made the row meanwhile
	}
	return id, err
}

// chunksPerQuery is how many chunks one query of Chunks reads.
const chunksPerQuery = 8

// Chunks calls fn with the bytes of generation gen of pushed file id from
// offset from to the end held, in order: the chunk holding from is cut
// to start there. A few chunks are read per query, so memory stays small
// however much is held.
func (s Table) Chunks(ctx context.Context, id, gen, from int64, fn func(off int64, data []byte) error) error {
	at := from
	for {
		type piece struct {
			off  int64
			data []byte
		}
		var got []piece
		err := s.Use(ctx, func(db *sql.DB) error {
			got = got[:0]
			rows, err := db.QueryContext(ctx, s.Rebind(`SELECT off, data FROM push_chunks WHERE file_id = ? AND gen = ?
				AND off >= coalesce((SELECT max(off) FROM push_chunks WHERE file_id = ? AND gen = ? AND off <= ?), 0)
				ORDER BY off LIMIT ?`), id, gen, id, gen, at, chunksPerQuery)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var p piece
				if err := rows.Scan(&p.off, &p.data); err != nil {
					return err
				}
				got = append(got, p)
			}
			return rows.Err()
		})
		if err != nil {
			return err
		}
		progressed := false
		for _, p := range got {
			end := p.off + int64(len(p.data))
			if end <= at {
				continue
			}
			if p.off > at {
				return fmt.Errorf("pushed file %d: bytes %d to %d are missing", id, at, p.off)
			}
			if err := fn(at, p.data[at-p.off:]); err != nil {
				return err
			}
			at, progressed = end, true
		}
		if len(got) < chunksPerQuery || !progressed {
			return nil
		}
	}
}

// PushChannel returns the name of the PostgreSQL channel PushChunk
// notifies: one per schema, so that stores sharing a database do not
// hear each other.
func (s Table) PushChannel(ctx context.Context) (string, error) {
	if s.Engine() != store.Postgres {
		return "", errors.New("pushes are notified on PostgreSQL only")
	}
	var ch string
	err := s.Use(ctx, func(db *sql.DB) error {
		return db.QueryRowContext(ctx, `SELECT 'piweb_push_' || current_schema()`).Scan(&ch)
	})
	return ch, err
}

// Listen calls fn with the id of each pushed file as pushes to it commit
// (PostgreSQL's LISTEN), on a connection of its own, after calling ready
// once it listens. It returns when ctx is done (nil) or the connection
// fails (the error, classified): notices sent while nobody listened are
// lost, so whoever listens again looks at every file once ready is called.
func (s Table) Listen(ctx context.Context, ready func(), fn func(id int64)) error {
	ch, err := s.PushChannel(ctx)
	if err != nil {
		return err
	}
	conn, err := s.Connect(ctx)
	if err != nil {
		return s.listenErr(ctx, err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
		return s.listenErr(ctx, err)
	}
	ready()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return s.listenErr(ctx, err)
		}
		if id, err := strconv.ParseInt(n.Payload, 10, 64); err == nil {
			fn(id)
		}
	}
}

// listenErr is nil when ctx ended the listening, else err classified.
func (s Table) listenErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return s.Classify(err)
}
