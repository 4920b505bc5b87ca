#!/usr/bin/env node
// stats.mjs FILE
//
// Prints pi's own session statistics of FILE as JSON: AgentSession's
// getSessionStats() (what pi's /session shows), called on pi's
// SessionManager for a copy of the file, and getUsageCostBreakdown() by model.
// getSessionStats only reads this.sessionManager, this.sessionFile,
// this.sessionId and this.getContextUsage(), so it runs on a small object
// rather than a whole agent session (which needs models and credentials).
// agent-session.js cannot be imported on Node 20 (its HTTP client needs
// Node 22), so the method's own source is cut out of that file and compiled
// here, with the two helpers it calls from usage-totals.js in scope.
//
// Exit codes as oracle.mjs: 0 ok; 2 usage or I/O error; 3 pi refuses the file.

import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { installSeededRandom } from "./determinism.mjs";

installSeededRandom("oracle");

const dist = "./node_modules/@earendil-works/pi-coding-agent/dist/core";
const { SessionManager } = await import(`${dist}/session-manager.js`);
const { createUsageTotals, addUsageToTotals, getUsageCostBreakdown } = await import(`${dist}/usage-totals.js`);
const getSessionStats = methodOf(new URL(`${dist}/agent-session.js`, import.meta.url), "getSessionStats");

// methodOf compiles the method `name` of the class in file: its body runs
// as written, with createUsageTotals and addUsageToTotals in scope.
function methodOf(file, name) {
	const src = readFileSync(file, "utf8");
	const head = `\n    ${name}() {`;
	const start = src.indexOf(head);
	if (start < 0) throw new Error(`${name} not found in ${file}`);
	let depth = 0;
	let i = start + head.length - 1;
	for (; i < src.length; i++) {
		if (src[i] === "{") depth++;
		else if (src[i] === "}" && --depth === 0) break;
	}
	const body = src.slice(start + head.length, i);
	return new Function("createUsageTotals", "addUsageToTotals", `return function () {${body}}`)(
		createUsageTotals,
		addUsageToTotals,
	);
}

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
	const self = {
		sessionManager: sm,
		sessionFile: sm.getSessionFile(),
		sessionId: sm.getSessionId(),
		getContextUsage: () => undefined,
	};
	const stats = getSessionStats.call(self);
	delete stats.sessionFile;
	delete stats.contextUsage;
	const byModel = getUsageCostBreakdown(sm.getEntries());
	process.stdout.write(JSON.stringify({ stats, byModel }) + "\n");
} finally {
	rmSync(dir, { recursive: true, force: true });
}
