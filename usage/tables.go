package usage

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/piweb/piweb/ledger"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/store"
)

// Usage in the index store: what sessions cost, kept so that a report
// reads a few sums per file rather than every entry.
//
//   - usage_files: per session file, what a report names it by (piweb's
//     key, the session id, the project: a report reads this table and
//     usage_sums, never files), how the lineage names it (its path and
//     base name, and those its header gives as parentSession) and the file
//     that header resolves to now (parent_id; 0: none): the file at that
//     path, else the one file of that base name on the machine. Headers
//     that name each other in a loop are cut at the file with the smallest
//     path.
//   - usage: per entry that counts (Record), keyed by file and byte
//     offset, with the flags that say how it counts: active (on the path
//     to its file's last entry: its places are not 0 at its position),
//     copy (a file among its file's ancestors holds an entry of the same
//     id and time: it counts there, in the farthest such file) and
//     resumed (for an entry that counts: active in its file or in a copy;
//     what is not resumed is abandoned).
//   - usage_sums: per file, 15-minute bucket and model, the sums of the
//     entries that count (copy = 0), the abandoned part apart.
//   - usage_version: a count of the transactions that changed any of it
//     (Stored.UsageVersion), so a reader can keep what it read.
//
// All three are kept current inside the transaction of each save and
// removal (Tables, the store's Hook, which the catalog sets), whichever
// of a parent and its fork comes first: a change to an entry's flags
// looks again at every file that holds an entry of that id and time, and
// a change to a file's lineage at every entry of the file and of its
// descendants. On PostgreSQL these steps take turns (an
// advisory lock), so two transactions never decide about the same entry
// unseen by each other (one lock a schema: stores in other schemas of the
// database do not wait); SQLite's writers take turns anyway.

// Update is what a save tells of a file's usage (store.Save.Extra): how
// the lineage names the file and its source, and the records added since
// the file's last save (those the store holds are left as they are).
type Update struct {
	Session string // piweb's key of the session
	Link
	Records []Record
}

// Ledgers makes the Updates of the files a catalog saves, keeping the
// ledgers of those saved last that grew, so that each append is read
// alone (the zero value is empty and ready).
type Ledgers struct {
	mu    sync.Mutex
	order []string // least recently used first
	byKey map[string]*ledger.Ledger
}

// ledgerFiles is how many files' ledgers Ledgers keeps: those pi is
// writing to.
const ledgerFiles = 8

// Update returns the usage a save of session s (at path, described by
// m) adds: how the lineage names the file, and the records from position
// from on (the store holds those before). Which of them are on the path
// is for the save's places to tell.
func (lc *Ledgers) Update(path string, s *sessions.Session, m *sessions.Meta, from int) (*Update, error) {
	r, err := s.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	l := lc.get(path, from > 0)
	if err := l.Update(r); err != nil {
		return nil, err
	}
	up := &Update{Session: m.Key, Link: LinkOf(path, m.ParentSession)}
	Records(s, r, l, from, func(rec *Record) { up.Records = append(up.Records, *rec) })
	return up, nil
}

// get returns a ledger for path: the one kept when the file grew since
// its last save (kept from now on), else a new one.
func (lc *Ledgers) get(path string, grew bool) *ledger.Ledger {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	l := lc.byKey[path]
	if k := slices.Index(lc.order, path); k >= 0 {
		lc.order = slices.Delete(lc.order, k, k+1)
	}
	if !grew {
		delete(lc.byKey, path)
		return ledger.New()
	}
	if l == nil {
		l = ledger.New()
		if lc.byKey == nil {
			lc.byKey = map[string]*ledger.Ledger{}
		}
		lc.byKey[path] = l
	}
	lc.order = append(lc.order, path)
	if len(lc.order) > ledgerFiles {
		delete(lc.byKey, lc.order[0])
		lc.order = lc.order[1:]
	}
	return l
}

// sumKey names one row of usage_sums.
type sumKey struct {
	file   int64
	bucket int64
	model  string
}

// link is a file's row of usage_files, as far as the lineage needs it.
type link struct {
	machine, path, name string
	parent              int64
}

// usageTx keeps usage current within one transaction: changes are noted
// as they are made, and finish looks again at what they touch.
type usageTx struct {
	db    *store.DB
	ctx   context.Context
	tx    *sql.Tx
	links map[int64]*link // read or written so far; nil: the file has none
	// moved are files whose ancestors changed: every entry of theirs and
	// of their descendants is looked at again.
	moved  map[int64]bool
	refs   map[ref]bool
	keys   map[sumKey]bool
	whole  map[int64]bool // files whose sums are made again whole
	chains map[int64][]int64
}

// manyKeys is how many sums of one file are made again one by one; more
// make the file's sums again whole.
const manyKeys = 16

func newUsageTx(ctx context.Context, db *store.DB, tx *sql.Tx) (*usageTx, error) {
	if db.Engine() == store.Postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7306217, hashtext(coalesce(current_schema(), '')))`); err != nil {
			return nil, err
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE usage_version SET n = n + 1`); err != nil {
		return nil, err
	}
	return &usageTx{db: db, ctx: ctx, tx: tx, links: map[int64]*link{}, moved: map[int64]bool{},
		refs: map[ref]bool{}, keys: map[sumKey]bool{}, whole: map[int64]bool{}}, nil
}

// Tables keeps the usage tables current: the store's Hook (store.DB.SetHook).
type Tables struct{}

// Saved applies the usage of saves written in tx.
func (Tables) Saved(ctx context.Context, db *store.DB, tx *sql.Tx, saved []store.Saved) error {
	todo := saved[:0:0]
	for _, sv := range saved {
		if sv.Extra != nil || sv.Reset || !bytes.Equal(sv.Old, sv.Now) {
			todo = append(todo, sv)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	u, err := newUsageTx(ctx, db, tx)
	if err != nil {
		return err
	}
	for _, sv := range todo {
		if err := u.save(sv); err != nil {
			return err
		}
	}
	return u.finish()
}

// Removed forgets the usage of the files with ids (being removed in tx).
func (Tables) Removed(ctx context.Context, db *store.DB, tx *sql.Tx, ids []int64) error {
	u, err := newUsageTx(ctx, db, tx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := u.drop(id); err != nil {
			return err
		}
	}
	return u.finish()
}

// Stored is the usage the index store keeps.
type Stored struct{ DB *store.DB }

// UsageVersion returns a number that changes whenever the store's usage
// does (a store made again starts from another): what was read at one
// number holds while it stays.
func (s Stored) UsageVersion(ctx context.Context) (int64, error) {
	var n int64
	err := s.DB.Use(ctx, func(db *sql.DB) error {
		return db.QueryRowContext(ctx, `SELECT n FROM usage_version`).Scan(&n)
	})
	return n, err
}

// q is the store's Rebind.
func (u *usageTx) q(query string) string { return u.db.Rebind(query) }

func (u *usageTx) exec(query string, args ...any) (sql.Result, error) {
	return u.tx.ExecContext(u.ctx, u.q(query), args...)
}

// link returns file id's row of usage_files (nil: none).
func (u *usageTx) link(id int64) (*link, error) {
	if l, ok := u.links[id]; ok {
		return l, nil
	}
	l := &link{}
	err := u.tx.QueryRowContext(u.ctx, u.q(`SELECT machine, path, name, parent_id FROM usage_files WHERE file_id = ?`), id).
		Scan(&l.machine, &l.path, &l.name, &l.parent)
	if errors.Is(err, sql.ErrNoRows) {
		l = nil
	} else if err != nil {
		return nil, err
	}
	u.links[id] = l
	return l, nil
}

// save applies one save's usage.
func (u *usageTx) save(sv store.Saved) error {
	up, _ := sv.Extra.(*Update)
	if sv.Reset && up == nil {
		return u.drop(sv.ID) // read again from the start, and not a session (or not told): nothing counts
	}
	l, err := u.link(sv.ID)
	if err != nil {
		return err
	}
	if up != nil {
		if u.db.Engine() == store.Postgres {
			up = pgUpdate(up)
		}
		if l, err = u.setLink(sv.ID, &sv.File, up); err != nil {
			return err
		}
	}
	if l == nil {
		return nil
	}
	linked := l.parent != 0
	if !linked {
		if linked, err = u.hasChildren(sv.ID); err != nil {
			return err
		}
	}
	if sv.Reset {
		if linked {
			if err := u.refsOf(sv.ID); err != nil {
				return err
			}
		}
		if _, err := u.exec(`DELETE FROM usage WHERE file_id = ?`, sv.ID); err != nil {
			return err
		}
		u.whole[sv.ID] = true
	} else if !bytes.Equal(sv.Old, sv.Now) {
		if err := u.flip(sv.ID, sv.Old, sv.Now, linked); err != nil {
			return err
		}
	}
	if up == nil || len(up.Records) == 0 {
		return nil
	}
	if err := u.insert(sv.ID, up.Records, sv.Now); err != nil {
		return err
	}
	for i := range up.Records {
		r := &up.Records[i]
		u.touch(sumKey{sv.ID, r.Start.UnixMilli(), r.Model})
		if linked && r.ID != "" {
			u.refs[ref{r.ID, r.Time}] = true
		}
	}
	return nil
}

// touch notes that the sums of k are to be made again.
func (u *usageTx) touch(k sumKey) {
	if !u.whole[k.file] {
		u.keys[k] = true
	}
}

// setLink writes file id's row of usage_files as us names it, and
// resolves its parent again (and that of files the change may concern).
func (u *usageTx) setLink(id int64, f *store.File, us *Update) (*link, error) {
	machine := f.Machine
	old, err := u.link(id)
	if err != nil {
		return nil, err
	}
	if old == nil {
		if _, err := u.exec(`INSERT INTO usage_files (file_id, machine, session, session_id, project, path, name, parent_path, parent_name, parent_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`, id, machine, us.Session, f.SessionID, f.Project, us.Path, us.Name, us.Parent, us.ParentName); err != nil {
			return nil, err
		}
	} else if _, err := u.exec(`UPDATE usage_files SET session = ?, session_id = ?, project = ?, path = ?, name = ?, parent_path = ?, parent_name = ?
		WHERE file_id = ?`, us.Session, f.SessionID, f.Project, us.Path, us.Name, us.Parent, us.ParentName, id); err != nil {
		return nil, err
	}
	l := &link{machine: machine, path: us.Path, name: us.Name}
	if old != nil {
		l.parent = old.parent
	}
	u.links[id] = l
	if old == nil || old.path != l.path || old.name != l.name {
		// Files whose headers name this one may resolve to it now, or
		// no longer to another of its name.
		if err := u.neighbours(machine, l.path, l.name, id); err != nil {
			return nil, err
		}
		if old != nil {
			if err := u.neighbours(machine, old.path, old.name, id); err != nil {
				return nil, err
			}
		}
	}
	return l, u.resolve(id)
}

// neighbours resolves again the parents of the files whose headers name
// path or name, or that resolve to file id, other than id.
func (u *usageTx) neighbours(machine, path, name string, id int64) error {
	rows, err := u.tx.QueryContext(u.ctx, u.q(`SELECT file_id FROM usage_files WHERE file_id <> ? AND
		(machine = ? AND (parent_path = ? OR parent_name = ?) OR parent_id = ?)`), id, machine, path, name, id)
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var x int64
		if err := rows.Scan(&x); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, x)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, x := range ids {
		if err := u.resolve(x); err != nil {
			return err
		}
	}
	return nil
}

// resolve finds the file that file id's header names now and records it;
// a change marks the file moved.
func (u *usageTx) resolve(id int64) error {
	l, err := u.link(id)
	if err != nil || l == nil {
		return err
	}
	var path, name string
	if err := u.tx.QueryRowContext(u.ctx, u.q(`SELECT parent_path, parent_name FROM usage_files WHERE file_id = ?`), id).Scan(&path, &name); err != nil {
		return err
	}
	var parent int64
	if path != "" {
		ids, err := u.ids(`SELECT file_id FROM usage_files WHERE machine = ? AND path = ? AND file_id <> ? LIMIT 1`, l.machine, path, id)
		if err != nil {
			return err
		}
		if len(ids) == 1 {
			parent = ids[0]
		} else if ids, err = u.ids(`SELECT file_id FROM usage_files WHERE machine = ? AND name = ? LIMIT 2`, l.machine, name); err != nil {
			return err
		} else if len(ids) == 1 && ids[0] != id {
			parent = ids[0]
		}
	}
	if parent == l.parent {
		return nil
	}
	if _, err := u.exec(`UPDATE usage_files SET parent_id = ? WHERE file_id = ?`, parent, id); err != nil {
		return err
	}
	l.parent = parent
	u.moved[id] = true
	u.chains = nil
	return nil
}

// ids returns the first column of a query's rows.
func (u *usageTx) ids(query string, args ...any) ([]int64, error) {
	rows, err := u.tx.QueryContext(u.ctx, u.q(query), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var x int64
		if err := rows.Scan(&x); err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// hasChildren reports whether a file's header resolves to file id.
func (u *usageTx) hasChildren(id int64) (bool, error) {
	ids, err := u.ids(`SELECT file_id FROM usage_files WHERE parent_id = ? LIMIT 1`, id)
	return len(ids) > 0, err
}

// refsOf notes every ref file id holds, to be looked at again.
func (u *usageTx) refsOf(id int64) error {
	rows, err := u.tx.QueryContext(u.ctx, u.q(`SELECT entry_id, ts FROM usage WHERE file_id = ? AND entry_id <> ''`), id)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r ref
		if err := rows.Scan(&r.id, &r.time); err != nil {
			return err
		}
		u.refs[r] = true
	}
	return rows.Err()
}

// drop forgets file id's usage (its file is removed, or no longer a session).
func (u *usageTx) drop(id int64) error {
	l, err := u.link(id)
	if err != nil {
		return err
	}
	if l != nil {
		linked := l.parent != 0
		if !linked {
			if linked, err = u.hasChildren(id); err != nil {
				return err
			}
		}
		if linked {
			if err := u.refsOf(id); err != nil {
				return err
			}
		}
	}
	for _, q := range []string{`DELETE FROM usage WHERE file_id = ?`, `DELETE FROM usage_sums WHERE file_id = ?`, `DELETE FROM usage_files WHERE file_id = ?`} {
		if _, err := u.exec(q, id); err != nil {
			return err
		}
	}
	u.links[id] = nil
	u.chains = nil
	delete(u.moved, id)
	delete(u.whole, id)
	if l == nil {
		return nil
	}
	return u.neighbours(l.machine, l.path, l.name, id)
}

// flip sets the active flags of file id's entries whose place moved on or
// off the path between places old and now (a rewind).
func (u *usageTx) flip(id int64, old, now []byte, linked bool) error {
	var on, off []int
	for b := range min(len(old), len(now)) {
		if old[b] == now[b] {
			continue
		}
		for k := range 4 {
			p := 4*b + k
			switch was, is := store.OnPath(old, p), store.OnPath(now, p); {
			case is && !was:
				on = append(on, p)
			case was && !is:
				off = append(off, p)
			}
		}
	}
	for _, set := range []struct {
		pos    []int
		active int
	}{{on, 1}, {off, 0}} {
		for len(set.pos) > 0 {
			n := min(len(set.pos), 500)
			chunk := set.pos[:n]
			set.pos = set.pos[n:]
			// In a file outside every lineage, and for an entry without
			// an id (never a copy), what is active is resumed; else
			// finish decides.
			resumed := "?"
			if linked {
				resumed = "CASE WHEN entry_id = '' THEN ? ELSE resumed END"
			}
			args := []any{set.active, set.active, id, set.active}
			for _, p := range chunk {
				args = append(args, p)
			}
			rows, err := u.tx.QueryContext(u.ctx, u.q(`UPDATE usage SET active = ?, resumed = `+resumed+`
				WHERE file_id = ? AND active <> ? AND pos IN (`+store.Marks(n)+`) RETURNING entry_id, ts, bucket, model, copy`), args...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var r ref
				var k sumKey
				var copied int
				if err := rows.Scan(&r.id, &r.time, &k.bucket, &k.model, &copied); err != nil {
					rows.Close()
					return err
				}
				k.file = id
				if copied == 0 {
					u.touch(k)
				}
				if linked && r.id != "" {
					u.refs[r] = true
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// insert adds rows of file id that the store does not hold, active as
// places say, counting where they are until finish looks at their copies.
func (u *usageTx) insert(id int64, rows []Record, places []byte) error {
	flag := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	if u.db.Engine() == store.Postgres {
		n := len(rows)
		offs, poss, tss, buckets := make([]int64, n), make([]int32, n), make([]int64, n), make([]int64, n)
		eids, models := make([]string, n), make([]string, n)
		turns, ins, outs, crs, cws := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		costs := make([]float64, n)
		errs, aborts, actives := make([]int32, n), make([]int32, n), make([]int32, n)
		for i := range rows {
			r := &rows[i]
			offs[i], poss[i], tss[i], buckets[i] = r.Off, int32(r.Pos), r.Time, r.Start.UnixMilli()
			eids[i], models[i] = r.ID, r.Model
			turns[i], ins[i], outs[i], crs[i], cws[i], costs[i] = r.Turns, r.Input, r.Output, r.CacheRead, r.CacheWrite, r.Cost
			errs[i], aborts[i], actives[i] = int32(flag(r.Errored)), int32(flag(r.Aborted)), int32(flag(store.OnPath(places, r.Pos)))
		}
		_, err := u.tx.ExecContext(u.ctx, `INSERT INTO usage (file_id, off, pos, entry_id, ts, bucket, model, turns, input, output,
			cache_read, cache_write, cost, errored, aborted, active, copy, resumed)
			SELECT $1, o, p, e, t, b, m, tu, i, ou, cr, cw, c, er, ab, ac, 0, ac FROM unnest($2::bigint[], $3::int[], $4::text[],
			$5::bigint[], $6::bigint[], $7::text[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[],
			$13::float8[], $14::int[], $15::int[], $16::int[]) AS x(o, p, e, t, b, m, tu, i, ou, cr, cw, c, er, ab, ac)
			ON CONFLICT (file_id, off) DO NOTHING`,
			id, offs, poss, eids, tss, buckets, models, turns, ins, outs, crs, cws, costs, errs, aborts, actives)
		return err
	}
	st, err := u.tx.PrepareContext(u.ctx, `INSERT INTO usage (file_id, off, pos, entry_id, ts, bucket, model, turns, input, output,
		cache_read, cache_write, cost, errored, aborted, active, copy, resumed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)
		ON CONFLICT (file_id, off) DO NOTHING`)
	if err != nil {
		return err
	}
	defer st.Close()
	for i := range rows {
		r := &rows[i]
		active := flag(store.OnPath(places, r.Pos))
		if _, err := st.ExecContext(u.ctx, id, r.Off, r.Pos, r.ID, r.Time, r.Start.UnixMilli(), r.Model, r.Turns, r.Input, r.Output,
			r.CacheRead, r.CacheWrite, r.Cost, flag(r.Errored), flag(r.Aborted), active, active); err != nil {
			return err
		}
	}
	return nil
}

// finish looks again at the entries the changes touch and makes their
// sums again.
func (u *usageTx) finish() error {
	// Files whose ancestors changed, and their descendants: every entry.
	seen := map[int64]bool{}
	var walk []int64
	for id := range u.moved {
		walk = append(walk, id)
	}
	for len(walk) > 0 {
		id := walk[len(walk)-1]
		walk = walk[:len(walk)-1]
		if seen[id] {
			continue
		}
		seen[id] = true
		if err := u.refsOf(id); err != nil {
			return err
		}
		kids, err := u.ids(`SELECT file_id FROM usage_files WHERE parent_id = ?`, id)
		if err != nil {
			return err
		}
		walk = append(walk, kids...)
	}
	if err := u.recount(); err != nil {
		return err
	}
	byFile := map[int64][]sumKey{}
	for k := range u.keys {
		if !u.whole[k.file] {
			byFile[k.file] = append(byFile[k.file], k)
		}
	}
	for id, keys := range byFile {
		if len(keys) > manyKeys {
			u.whole[id] = true
			continue
		}
		for _, k := range keys {
			if err := u.sums(k.file, &k); err != nil {
				return err
			}
		}
	}
	for id := range u.whole {
		if err := u.sums(id, nil); err != nil {
			return err
		}
	}
	return nil
}

// holder is one entry of a ref's group.
type holder struct {
	file, off      int64
	pos            int
	active         bool
	copied, resume bool // as the store has them
	bucket         int64
	model          string
	origin         int64 // the file it counts in (its own: 0)
	nowCopy, nowRe bool  // as they are to be
}

// recount decides again, for every noted ref, which of the entries that
// hold it counts (the one in the farthest ancestor of the others) and
// whether it is resumed, and writes the flags that changed.
func (u *usageTx) recount() error {
	if len(u.refs) == 0 {
		return nil
	}
	byID := map[string][]int64{} // entry id → times asked about
	var idList []string
	for r := range u.refs {
		if byID[r.id] == nil {
			idList = append(idList, r.id)
		}
		byID[r.id] = append(byID[r.id], r.time)
	}
	slices.Sort(idList)
	for len(idList) > 0 {
		n := min(len(idList), 500)
		chunk := idList[:n]
		idList = idList[n:]
		groups := map[ref][]*holder{}
		var rows *sql.Rows
		var err error
		const cols = `SELECT file_id, off, pos, entry_id, ts, active, copy, resumed, bucket, model FROM usage WHERE entry_id `
		if u.db.Engine() == store.Postgres {
			rows, err = u.tx.QueryContext(u.ctx, cols+`= ANY($1::text[])`, chunk)
		} else {
			args := make([]any, n)
			for i, id := range chunk {
				args[i] = id
			}
			rows, err = u.tx.QueryContext(u.ctx, cols+`IN (`+store.Marks(n)+`)`, args...)
		}
		if err != nil {
			return err
		}
		for rows.Next() {
			h := &holder{}
			var r ref
			var active, copied, resumed int
			if err := rows.Scan(&h.file, &h.off, &h.pos, &r.id, &r.time, &active, &copied, &resumed, &h.bucket, &h.model); err != nil {
				rows.Close()
				return err
			}
			if !u.refs[r] {
				continue
			}
			h.active, h.copied, h.resume = active == 1, copied == 1, resumed == 1
			groups[r] = append(groups[r], h)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, g := range groups {
			if err := u.decide(g); err != nil {
				return err
			}
		}
	}
	return nil
}

// decide sets the flags of one ref's holders and writes those that changed.
func (u *usageTx) decide(g []*holder) error {
	in := map[int64][]*holder{} // holders by file, in position order
	for _, h := range g {
		in[h.file] = append(in[h.file], h)
	}
	for _, hs := range in {
		slices.SortFunc(hs, func(a, b *holder) int { return a.pos - b.pos })
	}
	for _, h := range g {
		up, err := u.chain(h.file)
		if err != nil {
			return err
		}
		h.origin = 0
		for a := len(up) - 1; a >= 0; a-- { // the farthest ancestor that holds it wrote it first
			if in[up[a]] != nil {
				h.origin = up[a]
				break
			}
		}
		h.nowCopy = h.origin != 0
		h.nowRe = h.active
	}
	for _, h := range g {
		if h.nowCopy && h.active {
			hs := in[h.origin]
			hs[len(hs)-1].nowRe = true // (a file that holds it twice: its last)
		}
	}
	for _, h := range g {
		if h.nowCopy == h.copied && h.nowRe == h.resume {
			continue
		}
		c, r := 0, 0
		if h.nowCopy {
			c = 1
		}
		if h.nowRe {
			r = 1
		}
		if _, err := u.exec(`UPDATE usage SET copy = ?, resumed = ? WHERE file_id = ? AND off = ?`, c, r, h.file, h.off); err != nil {
			return err
		}
		if h.nowCopy != h.copied || !h.nowCopy {
			u.touch(sumKey{h.file, h.bucket, h.model})
		}
	}
	return nil
}

// chain returns the ancestors of file id, nearest first, along the
// resolved parents; a loop is cut at the file with the smallest path.
func (u *usageTx) chain(id int64) ([]int64, error) {
	if c, ok := u.chains[id]; ok {
		return c, nil
	}
	walk := []int64{id}
	at := map[int64]int{id: 0}
	out := []int64(nil)
	for v := id; ; {
		l, err := u.link(v)
		if err != nil {
			return nil, err
		}
		if l == nil || l.parent == 0 {
			out = walk[1:]
			break
		}
		v = l.parent
		if k, ok := at[v]; ok { // a loop from walk[k] on: cut at its smallest path
			cut := k
			for i := k + 1; i < len(walk); i++ {
				a, err := u.link(walk[i])
				if err != nil {
					return nil, err
				}
				b, _ := u.link(walk[cut])
				if a != nil && b != nil && a.path < b.path {
					cut = i
				}
			}
			out = walk[1 : cut+1]
			break
		}
		at[v] = len(walk)
		walk = append(walk, v)
	}
	if u.chains == nil {
		u.chains = map[int64][]int64{}
	}
	u.chains[id] = out
	return out, nil
}

// sums makes the sums of file id again: of one key, or (nil) all of them.
// They are added in the order of the file's entries, as usage.Files adds
// them, so both give the same floating-point costs.
func (u *usageTx) sums(id int64, k *sumKey) error {
	where, args := `file_id = ?`, []any{id}
	if k != nil {
		where += ` AND bucket = ? AND model = ?`
		args = append(args, k.bucket, k.model)
	}
	rows, err := u.tx.QueryContext(u.ctx, u.q(`SELECT bucket, model, turns, input, output, cache_read, cache_write, cost,
		resumed, errored, aborted FROM usage WHERE `+where+` AND copy = 0 ORDER BY off`), args...)
	if err != nil {
		return err
	}
	type sum struct {
		key             sumKey
		all, abandoned  Sums
		errors, aborted int64
	}
	var list []*sum
	at := map[sumKey]*sum{}
	for rows.Next() {
		var key sumKey
		var t Sums
		var resumed, errored, aborted int64
		if err := rows.Scan(&key.bucket, &key.model, &t.Turns, &t.Input, &t.Output, &t.CacheRead, &t.CacheWrite, &t.Cost,
			&resumed, &errored, &aborted); err != nil {
			rows.Close()
			return err
		}
		key.file = id
		s := at[key]
		if s == nil {
			s = &sum{key: key}
			at[key] = s
			list = append(list, s)
		}
		s.all.Add(t)
		if resumed == 0 {
			s.abandoned.Add(t)
		}
		s.errors += errored
		s.aborted += aborted
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if _, err := u.exec(`DELETE FROM usage_sums WHERE `+where, args...); err != nil {
		return err
	}
	if len(list) == 0 {
		return nil
	}
	if u.db.Engine() == store.Postgres && len(list) > 1 {
		cols := make([][]int64, 13)
		costs := [2][]float64{}
		models := make([]string, len(list))
		for _, s := range list {
			for c, v := range []int64{s.key.bucket, s.all.Turns, s.all.Input, s.all.Output, s.all.CacheRead, s.all.CacheWrite,
				s.abandoned.Turns, s.abandoned.Input, s.abandoned.Output, s.abandoned.CacheRead, s.abandoned.CacheWrite, s.errors, s.aborted} {
				cols[c] = append(cols[c], v)
			}
			costs[0] = append(costs[0], s.all.Cost)
			costs[1] = append(costs[1], s.abandoned.Cost)
		}
		for i, s := range list {
			models[i] = s.key.model
		}
		_, err := u.tx.ExecContext(u.ctx, `INSERT INTO usage_sums (file_id, bucket, model, turns, input, output, cache_read, cache_write,
			cost, ab_turns, ab_input, ab_output, ab_cache_read, ab_cache_write, ab_cost, errors, aborted)
			SELECT $1, b, m, tu, i, o, cr, cw, c, atu, ai, ao, acr, acw, ac, e, ab FROM unnest($2::bigint[], $3::text[],
			$4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::float8[], $10::bigint[], $11::bigint[],
			$12::bigint[], $13::bigint[], $14::bigint[], $15::float8[], $16::bigint[], $17::bigint[])
			AS x(b, m, tu, i, o, cr, cw, c, atu, ai, ao, acr, acw, ac, e, ab)`,
			id, cols[0], models, cols[1], cols[2], cols[3], cols[4], cols[5], costs[0], cols[6], cols[7], cols[8], cols[9], cols[10],
			costs[1], cols[11], cols[12])
		return err
	}
	for _, s := range list {
		if _, err := u.exec(`INSERT INTO usage_sums (file_id, bucket, model, turns, input, output, cache_read, cache_write,
			cost, ab_turns, ab_input, ab_output, ab_cache_read, ab_cache_write, ab_cost, errors, aborted)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, s.key.bucket, s.key.model, s.all.Turns, s.all.Input, s.all.Output, s.all.CacheRead, s.all.CacheWrite, s.all.Cost,
			s.abandoned.Turns, s.abandoned.Input, s.abandoned.Output, s.abandoned.CacheRead, s.abandoned.CacheWrite, s.abandoned.Cost,
			s.errors, s.aborted); err != nil {
			return err
		}
	}
	return nil
}

// UsageSums returns every file's usage sums, as rows of its machine in
// the store ("" for this machine's files), in no particular order: one
// per file, 15-minute bucket and model, each entry counted once (in the
// file that holds it first).
func (s Stored) UsageSums(ctx context.Context) ([]Row, error) {
	var out []Row
	err := s.DB.Use(ctx, func(db *sql.DB) error {
		// The files first (a few hundred bytes each), then their sums:
		// two scans rather than a lookup per sum.
		type named struct{ machine, session, id, project string }
		files := map[int64]*named{}
		rows, err := db.QueryContext(ctx, `SELECT file_id, machine, session, session_id, project FROM usage_files`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			n := &named{}
			if err := rows.Scan(&id, &n.machine, &n.session, &n.id, &n.project); err != nil {
				rows.Close()
				return err
			}
			files[id] = n
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(files) == 0 {
			out = nil
			return err
		}
		// Counted first (an index answers), so the sums, a few hundred
		// bytes each, are not copied as the list grows.
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM usage_sums`).Scan(&n); err != nil {
			return err
		}
		out = make([]Row, 0, n)
		rows, err = db.QueryContext(ctx, `SELECT file_id, bucket, model, turns, input, output, cache_read, cache_write, cost,
			ab_turns, ab_input, ab_output, ab_cache_read, ab_cache_write, ab_cost, errors, aborted FROM usage_sums`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, bucket int64
			var r Row
			a := &r.Abandoned
			if err := rows.Scan(intCol{&id}, intCol{&bucket}, &r.Model, intCol{&r.Turns}, intCol{&r.Input}, intCol{&r.Output},
				intCol{&r.CacheRead}, intCol{&r.CacheWrite}, floatCol{&r.Cost}, intCol{&a.Turns}, intCol{&a.Input}, intCol{&a.Output},
				intCol{&a.CacheRead}, intCol{&a.CacheWrite}, floatCol{&a.Cost}, intCol{&r.Errors}, intCol{&r.Aborted}); err != nil {
				return err
			}
			n := files[id]
			if n == nil {
				continue
			}
			r.Start = time.UnixMilli(bucket).UTC()
			r.Machine, r.Session, r.SessionID, r.Project = n.machine, n.session, n.id, n.project
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// StoredSession is a session the usage sums name: its file's list row.
type StoredSession struct {
	Machine string
	Session string // piweb's key
	Meta    []byte // store.File.Meta
}

// UsageSessions returns the list rows of the sessions with the given keys.
func (s Stored) UsageSessions(ctx context.Context, keys []string) ([]StoredSession, error) {
	var out []StoredSession
	err := s.DB.Use(ctx, func(db *sql.DB) error {
		out = nil
		for rest := keys; len(rest) > 0; {
			chunk := rest[:min(len(rest), 500)]
			rest = rest[len(chunk):]
			args := make([]any, len(chunk))
			for i, k := range chunk {
				args[i] = k
			}
			rows, err := db.QueryContext(ctx, s.DB.Rebind(`SELECT l.machine, l.session, f.meta FROM usage_files l JOIN files f ON f.id = l.file_id
				WHERE l.session IN (`+store.Marks(len(chunk))+`)`), args...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var us StoredSession
				var meta string
				if err := rows.Scan(&us.Machine, &us.Session, &meta); err != nil {
					rows.Close()
					return err
				}
				us.Meta = []byte(meta)
				out = append(out, us)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pgUpdate returns up with every text valid for PostgreSQL (store.PGText).
func pgUpdate(up *Update) *Update {
	t := store.PGText
	c := *up
	c.Session, c.Path, c.Name, c.Parent, c.ParentName = t(c.Session), t(c.Path), t(c.Name), t(c.Parent), t(c.ParentName)
	c.Records = make([]Record, len(up.Records))
	for i, r := range up.Records {
		r.ID, r.Model = t(r.ID), t(r.Model)
		c.Records[i] = r
	}
	return &c
}

// intCol scans an integer column into p without the reflection
// database/sql's Scan spends on an *int64 (a sum has fifteen of them).
type intCol struct{ p *int64 }

func (c intCol) Scan(v any) error {
	n, ok := v.(int64)
	if !ok {
		return fmt.Errorf("an integer column holds %T", v)
	}
	*c.p = n
	return nil
}

// floatCol scans a number column into p, as intCol does.
type floatCol struct{ p *float64 }

func (c floatCol) Scan(v any) error {
	switch x := v.(type) {
	case float64:
		*c.p = x
	case int64:
		*c.p = float64(x)
	default:
		return fmt.Errorf("a number column holds %T", v)
	}
	return nil
}
