// stats-lib.mjs: pi's own session statistics (AgentSession.getSessionStats
// and the /session breakdown by model) of a SessionManager, for stats.mjs
// and batch.mjs. agent-session.js cannot be imported on Node 20 (its HTTP
// client needs Node 22), so the method's own source is cut out of that file
// and compiled here, with the two helpers it calls from usage-totals.js in scope.

import { readFileSync } from "node:fs";

const dist = "./node_modules/@earendil-works/pi-coding-agent/dist/core";
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

// piStats is {stats, byModel} of sm: getSessionStats() (without the file and
// context usage, which need a live agent) and getUsageCostBreakdown().
export function piStats(sm) {
	// getSessionStats only reads this.sessionManager, this.sessionFile,
	// this.sessionId and this.getContextUsage(): a small object stands in for
	// the whole agent session (which needs models and credentials).
	const self = { sessionManager: sm, sessionFile: sm.getSessionFile(), sessionId: sm.getSessionId(), getContextUsage: () => undefined };
	const stats = getSessionStats.call(self);
	delete stats.sessionFile;
	delete stats.contextUsage;
	return { stats, byModel: getUsageCostBreakdown(sm.getEntries()) };
}
