#!/usr/bin/env node
// stats.mjs FILE
//
// Prints pi's own session statistics of FILE as JSON: AgentSession's
// getSessionStats() (what pi's /session shows), called on pi's
// SessionManager for a copy of the file, and getUsageCostBreakdown() by model
// (see stats-lib.mjs).
//
// Exit codes as oracle.mjs: 0 ok; 2 usage or I/O error; 3 pi refuses the file.

import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { installSeededRandom } from "./determinism.mjs";
import { piStats } from "./stats-lib.mjs";

installSeededRandom("oracle");

const { SessionManager } = await import("./node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js");

const file = process.argv[2];
if (!file || process.argv.length > 3) {
	process.stderr.write("usage: node stats.mjs FILE\n");
	process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), "pi-stats-"));
try {
	const copy = join(dir, basename(file));
	copyFileSync(file, copy);
	let sm;
	try {
		sm = SessionManager.open(copy, dir);
	} catch (err) {
		process.stdout.write(JSON.stringify({ error: String(err?.message ?? err) }) + "\n");
		process.exit(3);
	}
	process.stdout.write(JSON.stringify(piStats(sm)) + "\n");
} finally {
	rmSync(dir, { recursive: true, force: true });
}
