#!/usr/bin/env node
// batch.mjs < files.json
//
// pi's reading of many session files in one process, for the randomised
// differential test: reads a JSON array of file paths on stdin and writes a
// JSON array with, per file, either {"error", "exit"} (what oracle.mjs would
// print and exit with) or {"leaves": {ID: TEXT}}: TEXT is exactly what
// `node oracle.mjs FILE --leaf ID` prints (its JSON text, so escapes such as
// a lone surrogate's "\ud83d" survive), for "" (pi's own leaf) and every id,
// and "stats": pi's getSessionStats() of the file (stats-lib.mjs).

import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { OracleError, run } from "./reading.mjs";
import { piStats } from "./stats-lib.mjs";

const { SessionManager } = await import("./node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js");

// stats is pi's getSessionStats of a copy of file (see stats-lib.mjs).
function stats(file) {
	const dir = mkdtempSync(join(tmpdir(), "pi-batch-"));
	try {
		const copy = join(dir, basename(file));
		copyFileSync(file, copy);
		return piStats(SessionManager.open(copy, dir)).stats;
	} catch {
		return null; // pi's getSessionStats throws on some damaged entries (a message without one)
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const files = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const out = files.map((file) => {
	try {
		const all = run({ file, allLeaves: true });
		const leaves = Object.create(null);
		for (const id of Object.keys(all)) leaves[id] = `${JSON.stringify(all[id], null, 2)}\n`;
		return { leaves, stats: stats(file) };
	} catch (error) {
		if (!(error instanceof OracleError)) return { error: String(error?.stack ?? error), exit: 1 };
		return { error: error.message, exit: error.exitCode };
	}
});
process.stdout.write(JSON.stringify(out));
