#!/usr/bin/env node
// usage-gen.mjs OUTDIR [--extras] [--sessions N]
//
// Writes a sessions root, OUTDIR/sessions, with pi's own SessionManager, for
// the usage reports' agreement tests (usage/conformance_test.go): sessions in
// four projects using three models of two providers, spread over days around
// two changes of daylight saving time (Europe on 2025-03-30, the US on
// 2025-11-02) at all hours, with rewinds (branch, branchWithSummary), forks
// (createBranchedSession, at entries on and off the path, forks of forks),
// clones into another project (forkFrom), replies that failed or were aborted.
// With --extras it also writes the usage pi counts and ccusage does not read:
// usage entries, tool results with usage, compactions and branch summaries
// with usage.
//
// Prints {root, files: [{file, stats}], copies: [{file, stats}]}: pi's own
// getSessionStats of every file as it ends up on disk (read again with
// SessionManager.open), and of each fork or clone as pi made it, before
// anything was appended to it: the entries it copied.
//
// The clock and randomness are faked (determinism.mjs) and the choices come
// from a seeded generator, so a run is reproducible.

import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { clock, installFakeClock, installSeededRandom, reseed } from "./determinism.mjs";
import { piStats } from "./stats-lib.mjs";

const { values, positionals } = parseArgs({
	allowPositionals: true,
	options: { extras: { type: "boolean", default: false }, sessions: { type: "string", default: "14" } },
});
if (positionals.length !== 1) {
	process.stderr.write("usage: node usage-gen.mjs OUTDIR [--extras] [--sessions N]\n");
	process.exit(2);
}
const outDir = resolve(positionals[0]);
if (existsSync(outDir) && readdirSync(outDir).length > 0) {
	process.stderr.write(`usage-gen: ${outDir} is not empty\n`);
	process.exit(2);
}
const root = join(outDir, "sessions"); // ccusage takes the folder after "sessions" as the project
mkdirSync(root, { recursive: true });

installSeededRandom("usage");
installFakeClock();
clock.step = 1000;
const { SessionManager } = await import("./node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js");

// A seeded generator (mulberry32), so the files are the same on every run.
let seed = 0x5eed;
function rand() {
	seed = (seed + 0x6d2b79f5) | 0;
	let t = seed;
	t = Math.imul(t ^ (t >>> 15), t | 1);
	t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
	return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (list) => list[Math.floor(rand() * list.length)];
const between = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));

const projectDir = (cwd) => join(root, `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
const CWDS = ["/home/dev/shop", "/home/dev/api", "/home/dev/ml", "/home/dev/docs"];

// Three models; each model name is its own, so ccusage's "[pi] model" names one.
const MODELS = [
	{ api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", price: [3, 15, 0.3, 3.75] },
	{ api: "anthropic-messages", provider: "anthropic", model: "claude-haiku-4-5", price: [1, 5, 0.1, 1.25] },
	{ api: "openai-responses", provider: "openai", model: "gpt-5", price: [1.25, 10, 0.125, 0] },
];

function usage(m, input, output, cacheRead, cacheWrite) {
	const [pi, po, pr, pw] = m.price;
	const cost = { input: (input * pi) / 1e6, output: (output * po) / 1e6, cacheRead: (cacheRead * pr) / 1e6, cacheWrite: (cacheWrite * pw) / 1e6 };
	cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
	return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost };
}
const someUsage = (m) => usage(m, between(50, 4000), between(20, 2000), rand() < 0.7 ? between(0, 60000) : 0, rand() < 0.4 ? between(0, 8000) : 0);

// Moves the clock on by 1 to 90 minutes, sometimes hours: entries fall at every hour.
function later() {
	clock.set(clock.now + (rand() < 0.1 ? between(2, 9) * 3600_000 : between(1, 90) * 60_000) + between(0, 59_999));
}

const copies = [];
const files = new Set();

// One session: a chain of turns with rewinds, and (in two sessions of three)
// forks and clones along the way.
function session(n) {
	reseed(`usage-${n}`);
	const cwd = CWDS[n % CWDS.length];
	let sm = SessionManager.create(cwd, projectDir(cwd));
	let model = MODELS[n % MODELS.length];
	const ids = []; // every entry written to the current file, to rewind or fork to
	const user = (text) => {
		later();
		const id = sm.appendMessage({ role: "user", content: text, timestamp: clock.tick() });
		ids.push(id);
		return id;
	};
	const assistant = (content, stopReason) => {
		later();
		const msg = { role: "assistant", content, api: model.api, provider: model.provider, model: model.model, usage: someUsage(model), stopReason, timestamp: clock.tick() };
		if (stopReason === "error") msg.errorMessage = "overloaded";
		const id = sm.appendMessage(msg);
		ids.push(id);
		return id;
	};
	const forks = n % 3 !== 0; // a third of the sessions stay one file
	const rounds = between(5, 12);
	for (let r = 0; r < rounds; r++) {
		user(`Step ${r} of session ${n}`);
		const roll = rand();
		if (roll < 0.3) {
			const call = `toolu_${n}_${r}`;
			assistant([{ type: "toolCall", id: call, name: "read", arguments: { path: `src/${r}.ts` } }], "toolUse");
			later();
			const res = { role: "toolResult", toolCallId: call, toolName: "read", content: [{ type: "text", text: "…" }], isError: false, timestamp: clock.tick() };
			if (values.extras && rand() < 0.5) res.usage = usage(model, between(1, 300), between(1, 100), 0, 0);
			ids.push(sm.appendMessage(res));
			assistant([{ type: "text", text: "Read it." }], "stop");
		} else if (roll < 0.4) {
			assistant([{ type: "text", text: "" }], "error");
		} else if (roll < 0.47) {
			assistant([{ type: "text", text: "Stopped." }], "aborted");
		} else {
			assistant([{ type: "text", text: `Answer ${r}.` }], "stop");
		}
		if (values.extras && rand() < 0.15) {
			later();
			const e = sm.appendUsage("web_search", model.provider, model.model, usage(model, between(1, 50), between(1, 50), 0, 0));
			ids.push(e.id);
		}
		if (values.extras && rand() < 0.1) {
			later();
			ids.push(sm.appendCompaction(`Summary ${r}`, pick(ids), 12000, undefined, false, usage(model, between(100, 900), between(50, 300), 0, 0)));
		}
		const next = rand();
		if (next < 0.15 && ids.length > 2) {
			// Rewind: go on from an earlier entry; what came after is abandoned.
			sm.branch(pick(ids.slice(0, -1)));
		} else if (next < 0.22 && ids.length > 2) {
			later();
			const u = values.extras && rand() < 0.6 ? usage(model, between(100, 900), between(50, 300), 0, 0) : undefined;
			ids.push(sm.branchWithSummary(pick(ids.slice(0, -1)), "Tried another way.", undefined, false, u));
		} else if (forks && next < 0.34) {
			// Fork a path, often one rewound away: the fork goes on from there.
			later();
			const from = pick(ids);
			files.add(sm.getSessionFile());
			sm.createBranchedSession(from);
			copies.push({ file: sm.getSessionFile(), stats: piStats(sm).stats });
			ids.length = 0;
			ids.push(...sm.getEntries().map((e) => e.id));
		} else if (forks && next < 0.39) {
			// Clone the whole file into another project (pi's --fork).
			later();
			const src = sm.getSessionFile();
			files.add(src);
			if (sm.getEntries().some((e) => e.type === "message" && e.message.role === "assistant")) {
				const cwd2 = pick(CWDS);
				sm = SessionManager.forkFrom(src, cwd2, projectDir(cwd2));
				copies.push({ file: sm.getSessionFile(), stats: piStats(sm).stats });
				ids.length = 0;
				ids.push(...sm.getEntries().map((e) => e.id));
			}
		}
		if (rand() < 0.2) model = pick(MODELS);
	}
	user("Wrap up");
	assistant([{ type: "text", text: "Done." }], "stop"); // a fork made last is written too
	files.add(sm.getSessionFile());
}

// The sessions start a day apart around each change of daylight saving time.
const n = Number(values.sessions);
for (let i = 0; i < n; i++) {
	const base = i % 2 === 0 ? Date.UTC(2025, 2, 27, 6) : Date.UTC(2025, 9, 30, 6);
	clock.set(base + Math.floor(i / 2) * 86_400_000 * 0.8);
	session(i);
}

const out = { root, files: [], copies };
for (const file of [...files].sort()) {
	if (!existsSync(file)) continue; // a fork without a reply is never written
	out.files.push({ file, stats: piStats(SessionManager.open(file, outDir)).stats });
}
for (const c of copies) {
	if (!existsSync(c.file)) throw new Error(`fork ${c.file} was not written`);
}
process.stdout.write(JSON.stringify(out) + "\n");
