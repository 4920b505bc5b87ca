#!/usr/bin/env node
// random.mjs OUTDIR SEED N [FIRST]
//
// Writes N random session files into OUTDIR with pi's own SessionManager and
// prints a JSON array of {file, seed, damage}, one per file. File k (from
// FIRST, default 0) depends only on "SEED/k": the same seed gives the same
// bytes on every run and machine (clock and randomness are faked, see
// determinism.mjs).
//
// Each file is a random walk over pi's API: user, assistant (text, thinking,
// tool calls), toolResult, bashExecution, custom and system messages; model
// and thinking-level changes; labels set and cleared; names; compactions and
// branch summaries; custom entries and custom messages; context edits; usage
// entries; branch() and resetLeaf() to earlier entries. Text mixes ASCII,
// paths under the home folder, letters whose case mapping is special (Σ, ς,
// İ, ß), emoji and combining marks, often cut by UTF-16 length as pi cuts
// tool output, which leaves lone surrogates.
//
// About a third of the files are then damaged in ways pi tolerates (damage
// lists them): a line deleted or duplicated, the last line truncated, invalid
// UTF-8 bytes put inside a string or elsewhere, a blank or garbage line.

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { clock, installFakeClock, installSeededRandom, reseed } from "./determinism.mjs";

/** A PRNG (mulberry32) seeded from a text. */
export function rng(text) {
	let a = createHash("sha256").update(text).digest().readUInt32LE(0);
	const next = () => {
		a = (a + 0x6d2b79f5) | 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
	const r = {
		next,
		int: (n) => Math.floor(next() * n), // 0 … n-1
		chance: (p) => next() < p,
		pick: (arr) => arr[Math.floor(next() * arr.length)],
		weighted(table) {
			let total = 0;
			for (const [w] of table) total += w;
			let x = next() * total;
			for (const [w, v] of table) {
				x -= w;
				if (x < 0) return v;
			}
			return table[table.length - 1][1];
		},
	};
	return r;
}

// Pieces of text. Case-special letters, surrogate pairs, combining marks,
// zero-width joiners, line separators, control characters, paths in $HOME.
const WORDS = [
	"the", "cart", "total", "fix", "test", "Retry", "DONE", "npm", "src/cart.ts", "λ", "ΣΟΦΙΑ", "ΟΔΟΣ", "σοφός",
	"ς", "σ", "Σ", "İstanbul", "ı", "I", "i", "ß", "STRASSE", "ǅ", "ﬁle", "Ω", "K", "Å", "émoji", "e\u0301",
	"😀", "👩‍💻", "🇩🇪", "𝔘𝔫𝔦", "中文", "日本語", "עברית", "مرحبا", "\u200b", "\u2028", "\t", "\n", "\r\n",
	"~/x", "/home/u/proj/a.go", "/home/u", "\u0000", "\u001b[31m", "\"quoted\"", "back\\slash", "<b>", "&amp;",
	"  ", "\ud83d", "\ude00", "\ud800x", "x\udfff",
];

function phrase(r, max = 12) {
	const n = 1 + r.int(max);
	let s = "";
	for (let i = 0; i < n; i++) s += (i && r.chance(0.7) ? " " : "") + r.pick(WORDS);
	// Cut by UTF-16 length as pi cuts tool output and names: may split a pair.
	if (r.chance(0.3)) s = s.slice(0, r.int(s.length + 1));
	return s;
}

const PNG_1PX =
	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

function usage(r) {
	const input = r.int(5000);
	const output = r.int(800);
	const cacheRead = r.chance(0.5) ? r.int(4000) : 0;
	const cost = { input: (input * 3) / 1e6, output: (output * 15) / 1e6, cacheRead: (cacheRead * 0.3) / 1e6, cacheWrite: 0 };
	cost.total = cost.input + cost.output + cost.cacheRead;
	return { input, output, cacheRead, cacheWrite: 0, totalTokens: input + output + cacheRead, cost };
}

const TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls", "my_tool"];

function toolArgs(r, name) {
	switch (name) {
		case "read":
			return r.chance(0.5) ? { path: r.pick(["/home/u/proj/a.go", "~/notes.md", phrase(r, 3)]) } : { path: "/home/u/x", offset: r.int(50), limit: r.int(30) };
		case "bash":
			return { command: phrase(r, 8) };
		case "edit":
		case "write":
			return { path: r.pick(["/home/u/proj/a.go", "rel/b.ts", phrase(r, 2)]), content: phrase(r, 5) };
		case "grep":
			return { pattern: phrase(r, 2), path: r.pick([".", "/home/u/proj"]) };
		case "find":
			return { pattern: "*.go", path: r.pick([undefined, "/home/u"]) };
		case "ls":
			return r.chance(0.5) ? {} : { path: "/home/u/proj" };
		default:
			return { q: phrase(r, 3), n: r.int(9), deep: { list: [1, "two", null, true] } };
	}
}

/** Write file k of seed into outDir; returns its record. */
export function writeOne(SessionManager, outDir, seed, k) {
	const name = `${seed}/${k}`;
	reseed(name);
	const r = rng(name);
	clock.set(Date.UTC(2025, 0, 1, 9, 0, 0) + k * 86400000);
	const cwd = r.pick(["/home/u/proj", "/home/u/web shop", "/tmp/x"]);
	const dir = join(outDir, `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
	const sm = SessionManager.create(cwd, dir);
	const ids = [];
	const calls = []; // [id, name] of tool calls not yet answered
	const add = (id) => (ids.push(id), id);
	const model = () => r.pick([
		{ api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5" },
		{ api: "openai-responses", provider: "openai", model: "gpt-5" },
		{ api: "google", provider: "google", model: phrase(r, 2) },
	]);
	const textBlock = () => ({ type: "text", text: phrase(r) });
	// pi only writes the file once a user or assistant message exists.
	add(sm.appendMessage({ role: "user", content: phrase(r), timestamp: clock.tick() }));
	const steps = 1 + r.int(r.chance(0.2) ? 120 : 30);
	for (let s = 0; s < steps; s++) {
		const op = r.weighted([
			[10, "user"], [12, "assistant"], [8, "toolResult"], [2, "bash"], [1, "custom"], [1, "system"],
			[2, "model"], [2, "thinking"], [3, "label"], [2, "name"], [1, "compaction"], [2, "branchSummary"],
			[4, "branch"], [1, "reset"], [1, "customEntry"], [2, "customMessage"], [1, "contextEdit"], [1, "usage"],
		]);
		try {
			switch (op) {
				case "user":
					add(sm.appendMessage({
						role: "user",
						content: r.chance(0.6) ? phrase(r) : [textBlock(), ...(r.chance(0.3) ? [{ type: "image", data: PNG_1PX, mimeType: "image/png" }] : []), ...(r.chance(0.3) ? [textBlock()] : [])],
						timestamp: clock.tick(),
					}));
					break;
				case "assistant": {
					const blocks = [];
					if (r.chance(0.4)) blocks.push({ type: "thinking", thinking: phrase(r), thinkingSignature: "sig" });
					if (r.chance(0.7)) blocks.push(textBlock());
					const n = r.chance(0.5) ? r.int(4) : 0;
					for (let c = 0; c < n; c++) {
						const name = r.chance(0.05) ? undefined : r.pick(TOOLS);
						const id = `call_${r.int(1e6)}`;
						blocks.push({ type: "toolCall", id, name, arguments: toolArgs(r, name) });
						calls.push([id, name]);
					}
					const stop = n ? "toolUse" : r.weighted([[8, "stop"], [1, "length"], [1, "error"], [1, "aborted"]]);
					add(sm.appendMessage({
						role: "assistant",
						content: blocks,
						...model(),
						usage: usage(r),
						stopReason: stop,
						...(stop === "error" || stop === "aborted" ? { errorMessage: phrase(r, 4) } : {}),
						timestamp: clock.tick(),
					}));
					break;
				}
				case "toolResult": {
					const [id, name] = calls.length && r.chance(0.8) ? calls.splice(r.int(calls.length), 1)[0] : [`call_${r.int(1e6)}`, r.pick(TOOLS)];
					const out = phrase(r, 30);
					add(sm.appendMessage({
						role: "toolResult",
						toolCallId: id,
						...(r.chance(0.05) ? {} : { toolName: name }),
						content: [{ type: "text", text: r.chance(0.5) ? out.slice(0, r.int(out.length + 1)) : out }],
						...(r.chance(0.3) ? { details: { exitCode: r.int(3), diff: phrase(r, 3) } } : {}),
						isError: r.chance(0.2),
						timestamp: clock.tick(),
					}));
					break;
				}
				case "bash":
					add(sm.appendMessage({
						role: "bashExecution", command: phrase(r, 5), output: phrase(r, 20), exitCode: r.int(3),
						cancelled: r.chance(0.1), truncated: r.chance(0.1), ...(r.chance(0.2) ? { excludeFromContext: true } : {}),
						timestamp: clock.tick(),
					}));
					break;
				case "custom":
					add(sm.appendMessage({ role: "custom", customType: phrase(r, 2), content: phrase(r), display: r.chance(0.5), timestamp: clock.tick() }));
					break;
				case "system":
					add(sm.appendMessage({ role: "system", content: phrase(r), timestamp: clock.tick() }));
					break;
				case "model":
					add(sm.appendModelChange(r.pick(["anthropic", "openai", phrase(r, 1)]), phrase(r, 2)));
					break;
				case "thinking":
					add(sm.appendThinkingLevelChange(r.pick(["off", "minimal", "low", "medium", "high", "xhigh"])));
					break;
				case "label":
					add(sm.appendLabelChange(r.pick(ids), r.chance(0.8) ? phrase(r, 3) : r.pick([undefined, ""])));
					break;
				case "name":
					add(sm.appendSessionInfo(r.chance(0.9) ? phrase(r, 4) : ""));
					break;
				case "compaction": {
					const path = sm.getBranch().map((e) => e.id);
					add(sm.appendCompaction(phrase(r, 20), r.chance(0.9) && path.length ? r.pick(path) : r.pick(ids), r.int(90000), r.chance(0.3) ? { readFiles: ["a"] } : undefined, r.chance(0.2)));
					break;
				}
				case "branchSummary":
					add(sm.branchWithSummary(r.chance(0.9) ? r.pick(ids) : null, r.chance(0.9) ? phrase(r, 15) : ""));
					break;
				case "branch":
					sm.branch(r.pick(ids));
					break;
				case "reset":
					sm.resetLeaf();
					break;
				case "customEntry":
					add(sm.appendCustomEntry(phrase(r, 2), r.chance(0.7) ? { v: phrase(r, 3), n: r.int(100) } : undefined));
					break;
				case "customMessage":
					add(sm.appendCustomMessageEntry(
						phrase(r, 2),
						r.chance(0.5) ? phrase(r) : [textBlock(), ...(r.chance(0.3) ? [{ type: "image", data: PNG_1PX, mimeType: "image/png" }] : [])],
						r.chance(0.7),
						r.chance(0.3) ? { k: phrase(r, 2) } : undefined,
					));
					break;
				case "contextEdit": {
					const path = sm.getBranch().filter((e) => e.type === "message" || e.type === "custom_message");
					if (path.length) add(sm.appendContextEdit(r.pick(path).id, r.chance(0.4) ? null : { content: r.chance(0.5) ? phrase(r) : [textBlock()] }));
					break;
				}
				case "usage":
					add(sm.appendUsage(r.pick(["compaction", "branch_summary", phrase(r, 1)]), "anthropic", "claude", usage(r), r.chance(0.5) ? phrase(r, 3) : undefined).id);
					break;
			}
		} catch (error) {
			// pi refused the step (e.g. a context edit off the branch): nothing was written.
			if (!/not found|not on the active branch|editable|Context edit/i.test(error.message)) throw error;
		}
		if (r.chance(0.05)) clock.set(clock.now - r.int(3600000)); // clocks go back
	}
	const file = sm.getSessionFile();
	const damage = r.chance(0.35) ? damageFile(r, file) : [];
	return { file, seed: name, damage };
}

// Invalid UTF-8: lone continuation bytes, truncated sequences, overlongs,
// encoded surrogates, code points past U+10FFFF.
const BAD_UTF8 = [
	[0xff], [0x80], [0x80, 0x80], [0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xc0, 0x80], [0xe0, 0x80, 0xaf],
	[0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x28, 0xa1], [0xfe, 0xfe],
];

/** Damage the file in ways pi tolerates; returns what was done. */
function damageFile(r, file) {
	const bytes = readFileSync(file);
	let lines = [];
	for (let start = 0; start < bytes.length; ) {
		let end = bytes.indexOf(0x0a, start);
		if (end < 0) end = bytes.length;
		lines.push(bytes.subarray(start, end));
		start = end + 1;
	}
	const done = [];
	const n = 1 + r.int(3);
	for (let d = 0; d < n && lines.length > 1; d++) {
		const at = 1 + r.int(lines.length - 1); // never the header
		const kind = r.weighted([[3, "delete"], [2, "duplicate"], [4, "badUTF8InString"], [1, "badUTF8"], [1, "blank"], [1, "garbage"]]);
		switch (kind) {
			case "delete":
				lines.splice(at, 1);
				break;
			case "duplicate":
				lines.splice(1 + r.int(lines.length - 1), 0, lines[at]);
				break;
			case "badUTF8InString": {
				// Right after a string's opening quote (one that follows ':'), so the line stays JSON.
				const line = lines[at];
				const spots = [];
				for (let i = 1; i < line.length; i++) if (line[i] === 0x22 && line[i - 1] === 0x3a) spots.push(i + 1);
				if (!spots.length) continue;
				const i = r.pick(spots);
				lines[at] = Buffer.concat([line.subarray(0, i), Buffer.from(r.pick(BAD_UTF8)), line.subarray(i)]);
				break;
			}
			case "badUTF8": {
				const line = lines[at];
				const i = r.int(line.length + 1);
				lines[at] = Buffer.concat([line.subarray(0, i), Buffer.from(r.pick(BAD_UTF8)), line.subarray(i)]);
				break;
			}
			case "blank":
				lines.splice(at, 0, Buffer.from(r.pick(["", " ", "\t"])));
				break;
			case "garbage":
				lines.splice(at, 0, Buffer.from(r.pick(["{", "null", "[]", "42", '"x"', "{\"type\":\"message\"", "not json"])));
				break;
		}
		done.push(kind);
	}
	let out = Buffer.concat(lines.flatMap((l) => [l, Buffer.from("\n")]));
	if (r.chance(0.3)) {
		// Truncate inside the last line (as a crash mid-append leaves it).
		const last = lines[lines.length - 1];
		out = out.subarray(0, out.length - 1 - r.int(last.length + 1));
		done.push("truncate");
	}
	writeFileSync(file, out);
	return done;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("random.mjs")) {
	const [outArg, seed, nArg, firstArg] = process.argv.slice(2);
	const n = Number(nArg);
	const first = Number(firstArg ?? 0);
	if (!outArg || !seed || !Number.isInteger(n) || n < 0 || !Number.isInteger(first)) {
		process.stderr.write("usage: node random.mjs OUTDIR SEED N [FIRST]\n");
		process.exit(2);
	}
	const outDir = resolve(outArg);
	if (!existsSync(outDir)) mkdirSync(outDir, { recursive: true });
	installSeededRandom();
	installFakeClock();
	const { SessionManager } = await import("./node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js");
	const out = [];
	for (let k = first; k < first + n; k++) out.push(writeOne(SessionManager, outDir, seed, k));
	process.stdout.write(`${JSON.stringify(out)}\n`);
}
