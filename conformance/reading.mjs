// reading.mjs: pi's own reading of a session file, for oracle.mjs (one file
// on the command line) and batch.mjs (many files and leaves in one process).
// See oracle.mjs for what is read and why a copy is opened.

import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { installSeededRandom } from "./determinism.mjs";

// pi gives v1 entries random ids when it migrates them; seed its randomness so
// the oracle prints the same ids on every run.
installSeededRandom("oracle");

const { SessionManager } = await import(
	"./node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js"
);

export class OracleError extends Error {
	constructor(message, exitCode) {
		super(message);
		this.exitCode = exitCode;
	}
}

// The header's version as written, before pi migrates anything. Mirrors pi's
// loader: split on "\n", skip blank lines, unparsable lines and falsy JSON values;
// the first value left is the header.
function writtenVersion(text) {
	for (const line of text.split("\n")) {
		if (!line.trim()) continue;
		let value;
		try {
			value = JSON.parse(line);
		} catch {
			continue;
		}
		if (!value) continue;
		return value.version ?? 1;
	}
	return 1;
}

// pi's getTree() spins forever if, through duplicate ids, its node graph has a
// cycle reachable from a root. Mirror its linking (nodes keyed by id, last entry
// wins) and look for such a cycle before calling it.
function assertTreeTerminates(entries) {
	const keys = new Set(entries.map((e) => e.id));
	const children = new Map(); // key -> child keys
	const roots = [];
	for (const e of entries) {
		if (e.parentId === null || e.parentId === e.id || !keys.has(e.parentId)) {
			roots.push(e.id);
		} else {
			if (!children.has(e.parentId)) children.set(e.parentId, []);
			children.get(e.parentId).push(e.id);
		}
	}
	// Iterative DFS with colours: 1 = on the current stack, 2 = done.
	const colour = new Map();
	for (const root of roots) {
		if (colour.get(root) === 2) continue;
		const stack = [[root, 0]];
		colour.set(root, 1);
		while (stack.length > 0) {
			const frame = stack[stack.length - 1];
			const kids = children.get(frame[0]) ?? [];
			if (frame[1] >= kids.length) {
				colour.set(frame[0], 2);
				stack.pop();
				continue;
			}
			const kid = kids[frame[1]++];
			if (colour.get(kid) === 1) {
				throw new OracleError(`parent cycle through ${JSON.stringify(kid)}: pi's getTree() would loop forever`, 4);
			}
			if (colour.get(kid) !== 2) {
				colour.set(kid, 1);
				stack.push([kid, 0]);
			}
		}
	}
}

// pi's getBranch() / buildSessionContext() walk parentId links with no cycle
// check. Walk the same links (from the same start entry pi uses) first.
function assertPathTerminates(sm) {
	const entries = sm.getEntries();
	const leafId = sm.getLeafId();
	// getBranch() starts at the leaf; buildSessionContext() falls back to the
	// last entry in the file when the leaf id is undefined (an id-less last line).
	const starts = [leafId ? sm.getEntry(leafId) : undefined];
	if (leafId !== null) starts.push((leafId ? sm.getEntry(leafId) : undefined) ?? entries[entries.length - 1]);
	for (const start of starts) {
		const seen = new Set();
		let current = start;
		while (current) {
			if (seen.has(current)) {
				throw new OracleError(`parent cycle through ${JSON.stringify(current.id)}: pi's path walk would loop forever`, 4);
			}
			seen.add(current);
			current = current.parentId ? sm.getEntry(current.parentId) : undefined;
		}
	}
}

// pi's reading at the session manager's current leaf.
function inspect(sm, version) {
	assertPathTerminates(sm);
	const header = sm.getHeader();

	// Pre-order, depth-first over getTree(): roots in order, children in the
	// order pi sorted them (by timestamp). Iterative: an explicit stack.
	const tree = [];
	const stack = [...sm.getTree()].reverse();
	while (stack.length > 0) {
		const node = stack.pop();
		const entry = node.entry;
		tree.push({
			id: entry?.id ?? null,
			parentId: entry?.parentId ?? null,
			type: entry?.type ?? null,
			label: node.label ?? null,
			children: node.children.map((child) => child.entry?.id ?? null),
		});
		for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
	}

	return {
		sessionId: header.id,
		version,
		cwd: header.cwd ?? null,
		parentSession: header.parentSession ?? null,
		name: sm.getSessionName() ?? null,
		leafId: sm.getLeafId() ?? null,
		entryCount: sm.getEntryCount(),
		tree,
		path: sm.getBranch().map((entry) => entry?.id ?? null),
		context: sm.buildSessionContext(),
	};
}

export function run(opts) {
	let text;
	let size;
	try {
		size = statSync(opts.file).size;
		text = readFileSync(opts.file, "utf8");
	} catch (error) {
		throw new OracleError(`cannot read ${opts.file}: ${error.message}`, 2);
	}
	// pi turns an empty (0-byte) file into a brand-new session with a random id:
	// that is not a reading of the file.
	if (size === 0) throw new OracleError("empty file: pi would write a new session header into it", 3);
	const version = writtenVersion(text);

	const dir = mkdtempSync(join(tmpdir(), "pi-oracle-"));
	try {
		const copy = join(dir, basename(opts.file));
		copyFileSync(opts.file, copy);
		let sm;
		try {
			sm = SessionManager.open(copy);
		} catch (error) {
			// Name the user's file, not our temp copy.
			throw new OracleError(error.message.replaceAll(copy, opts.file), 3);
		}
		assertTreeTerminates(sm.getEntries());

		if (opts.allLeaves) {
			// Default leaf first: once branch() has moved the leaf there is no way back.
			// A prototype-less object, so ids like "__proto__" are plain keys.
			const out = Object.create(null);
			out[""] = inspect(sm, version);
			for (const entry of sm.getEntries()) {
				const id = entry?.id;
				if (typeof id !== "string" || Object.hasOwn(out, id)) continue;
				sm.branch(id);
				out[id] = inspect(sm, version);
			}
			return out;
		}
		if (opts.leaf !== undefined) {
			try {
				sm.branch(opts.leaf);
			} catch (error) {
				throw new OracleError(error.message, 2);
			}
		}
		return inspect(sm, version);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

