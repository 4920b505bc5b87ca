#!/usr/bin/env node
// after-write.mjs FILE [--fork ID]
//
// Opens a COPY of FILE with pi's own SessionManager and prints, as JSON, what pi
// would resume from: {version, sessionId, cwd, parentSession, leafId, labels
// ({id: label}), name, path (entry ids root→leaf), context
// (buildSessionContext()), file (the copy's text after pi opened it: pi repairs
// a missing final newline and rewrites v1/v2 files, so a file piweb wrote
// correctly comes back unchanged)}. With --fork ID it also runs pi's own
// createBranchedSession(ID) and adds {fork: the new file's text}; with
// --export ID it adds {export: what pi's /export file.jsonl writes for the
// branch ending at ID ("" for the leaf)}. piweb's writer tests (sessions/
// oracle_write_test.go) compare this with piweb's own reading.
//
// Exit codes: 0 ok; 2 usage or I/O error; 3 pi could not open the file.

import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { installSeededRandom } from "./determinism.mjs";

// pi invents ids when it migrates v1 files: keep them the same on every run.
installSeededRandom("after-write");

// The package "exports" map only exposes "." (which needs Node 22): import by path.
const { SessionManager } = await import(
	"./node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js"
);

const args = process.argv.slice(2);
let forkId;
const forkAt = args.indexOf("--fork");
if (forkAt >= 0) {
	forkId = args[forkAt + 1];
	args.splice(forkAt, 2);
}
let exportId;
const exportAt = args.indexOf("--export");
if (exportAt >= 0) {
	exportId = args[exportAt + 1];
	args.splice(exportAt, 2);
}
if (args.length !== 1 || args[0].startsWith("--") || (forkAt >= 0 && !forkId) || (exportAt >= 0 && exportId === undefined)) {
	process.stderr.write("usage: node after-write.mjs FILE [--fork ID] [--export ID|'']\n");
	process.exit(2);
}
const file = args[0];

const dir = mkdtempSync(join(tmpdir(), "pi-after-write-"));
try {
	const copy = join(dir, basename(file));
	try {
		copyFileSync(file, copy);
	} catch (error) {
		process.stderr.write(`after-write: cannot read ${file}: ${error.message}\n`);
		process.exit(2);
	}
	let sm;
	try {
		sm = SessionManager.open(copy);
	} catch (error) {
		process.stdout.write(`${JSON.stringify({ error: error.message.replaceAll(copy, file) })}\n`);
		process.exit(3);
	}
	const header = sm.getHeader();
	const labels = Object.create(null);
	for (const entry of sm.getEntries()) {
		const label = sm.getLabel(entry.id);
		if (label !== undefined) labels[entry.id] = label;
	}
	const out = {
		version: header?.version ?? null,
		sessionId: header?.id ?? null,
		cwd: header?.cwd ?? null,
		parentSession: header?.parentSession ?? null,
		leafId: sm.getLeafId() ?? null,
		labels,
		name: sm.getSessionName() ?? null,
		path: sm.getBranch().map((entry) => entry?.id ?? null),
		context: sm.buildSessionContext(),
		file: readFileSync(copy, "utf8"),
	};
	if (forkId !== undefined) {
		try {
			const forked = sm.createBranchedSession(forkId);
			out.fork = forked === undefined ? null : readFileSync(forked, "utf8");
		} catch (error) {
			process.stderr.write(`after-write: pi could not fork at ${forkId}: ${error.message}\n`);
			process.exit(2);
		}
	}
	if (exportId !== undefined) {
		// pi's /export file.jsonl of the branch ending at exportId ("" for the leaf).
		const { serializeSessionBranch } = await import(
			"./node_modules/@earendil-works/pi-coding-agent/dist/core/session-export.js"
		);
		if (exportId !== "") sm.branch(exportId);
		out.export = serializeSessionBranch(sm);
	}
	process.stdout.write(`${JSON.stringify(out)}\n`);
} finally {
	rmSync(dir, { recursive: true, force: true });
}
