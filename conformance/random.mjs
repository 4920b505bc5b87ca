#!/usr/bin/env node
// random.mjs OUTDIR --seed N --count K
//
// Writes K random session files with pi's own SessionManager, for the
// randomised differential test (cmd/piweb/random_test.go): file i comes from
// seed N*100000+i alone, so any file can be made again from its seed. Each
// file gets a random mix of what pi writes: user, assistant (text, thinking,
// tool calls), tool results, bash runs, custom messages and entries, labels
// (set and cleared), names, model and thinking changes, compactions, context
// edits, branches, branch summaries; text with odd Unicode, and tool output
// cut by UTF-16 length as pi cuts it (which leaves lone surrogates). About a
// third of the files are then damaged in ways pi tolerates: a line deleted
// or duplicated, the last line cut short, invalid UTF-8 bytes, garbage lines.
//
// Prints a JSON array of {"file", "seed", "damage"}; a seed whose session
// never got an assistant message has no file (pi writes none) and no entry.

import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { clock, installFakeClock, installSeededRandom, reseed } from "./determinism.mjs";

installSeededRandom("random");
installFakeClock();
const { SessionManager } = await import("./node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js");

function usage() {
	process.stderr.write("usage: node random.mjs OUTDIR --seed N --count K\n");
	process.exit(2);
}
const args = process.argv.slice(2);
const out = args[0];
let seed = 1;
let count = 10;
for (let i = 1; i < args.length; i++) {
	if (args[i] === "--seed") seed = Number(args[++i]);
	else if (args[i] === "--count") count = Number(args[++i]);
	else usage();
}
if (!out || !Number.isSafeInteger(seed) || !Number.isSafeInteger(count)) usage();

// mulberry32: a small seeded generator, so a file depends on its seed alone.
function rng(s) {
	let a = s >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

const WORDS = [
	"fix", "the", "login", "bug", "cart", "test", "Login", "FIX", "σ", "Σ", "ς", "İ", "i̇", "ß", "straße", "ǅ", "ﬁ", "ΣΑΣ",
	"日本語", "中文", "😀", "👩‍💻", "🇫🇷", "é", "é", "\u200b", "\t", "  ", "\\", '"', "<b>", "&amp;", "$HOME", "~/x",
	"`code`", "**bold**", "\n", "\r\n", "a\u0000b", "\u2028", "ok", "README.md", "/home/u/src/app.ts", "npm", "go", "Ω",
];

function gen(fileSeed) {
	const r = rng(fileSeed);
	const pick = (xs) => xs[Math.floor(r() * xs.length)];
	const chance = (p) => r() < p;
	const words = (n) => {
		const k = 1 + Math.floor(r() * n);
		let s = "";
		for (let i = 0; i < k; i++) s += (i && chance(0.8) ? " " : "") + pick(WORDS);
		return s;
	};
	// pi cuts long output by UTF-16 length: a cut inside an emoji leaves half of it.
	const cut = (s) => (chance(0.5) ? s.slice(0, Math.max(1, Math.floor(r() * s.length))) : s);
	const usage = () => {
		const u = { input: Math.floor(r() * 5000), output: Math.floor(r() * 800), cacheRead: Math.floor(r() * 3000), cacheWrite: Math.floor(r() * 500) };
		u.totalTokens = u.input + u.output + u.cacheRead + u.cacheWrite;
		u.cost = { input: u.input * 3e-6, output: u.output * 15e-6, cacheRead: u.cacheRead * 3e-7, cacheWrite: u.cacheWrite * 3.75e-6 };
		u.cost.total = u.cost.input + u.cost.output + u.cost.cacheRead + u.cost.cacheWrite;
		return u;
	};
	const tools = ["bash", "read", "edit", "write", "grep", "find", "ls", "custom_tool"];
	const argsFor = (name) => {
		switch (name) {
			case "bash":
				return { command: cut(words(6)) };
			case "read":
				return chance(0.5) ? { path: pick(WORDS) } : { path: "/home/u/" + pick(WORDS), offset: 1 + Math.floor(r() * 50), limit: 10 };
			case "edit":
				return { path: pick(WORDS), edits: [{ oldText: words(3), newText: words(3) }] };
			case "write":
				return { path: pick(WORDS), content: words(12) };
			case "grep":
				return { pattern: words(2), path: pick(WORDS) };
			case "find":
				return { pattern: "*" + pick(WORDS) };
			case "ls":
				return chance(0.5) ? {} : { path: pick(WORDS), limit: 3 };
			default:
				return { any: cut(words(3)), n: Math.floor(r() * 9) }; // shown as JSON in the tree: a lone surrogate escaped
		}
	};

	reseed(`random-${fileSeed}`);
	clock.set(Date.UTC(2025, 5, 1) + (fileSeed % 1e7) * 1000);
	const cwd = chance(0.2) ? "/home/u/" + pick(["weird dir", "日本", "a\\b"]) : "/home/u/project";
	const dir = join(out, "--home-u-project--");
	mkdirSync(dir, { recursive: true });
	const sm = SessionManager.create(cwd, dir);
	const file = sm.getSessionFile();
	let pending = [];
	const steps = 5 + Math.floor(r() * 60);
	for (let step = 0; step < steps; step++) {
		const ids = sm.getEntries().map((e) => e.id);
		const any = () => pick(ids);
		const x = r();
		try {
			if (pending.length && x < 0.3) {
				const call = pending.shift();
				const text = cut(words(10));
				sm.appendMessage({
					role: "toolResult",
					toolCallId: call.id,
					toolName: call.name,
					content: chance(0.9) ? [{ type: "text", text }] : [],
					...(chance(0.3) ? { details: chance(0.5) ? { diff: "-1 " + words(2) + "\n+1 " + words(2) } : { path: pick(WORDS) } } : {}),
					isError: chance(0.15),
					timestamp: clock.tick(),
				});
			} else if (x < 0.45) {
				// Text in two blocks split at a UTF-16 index: pi joins them, so halves of an emoji meet again.
				const split = (s, k = Math.floor(r() * (s.length + 1))) => [{ type: "text", text: s.slice(0, k) }, { type: "text", text: s.slice(k) }];
				sm.appendMessage({ role: "user", content: chance(0.6) ? cut(words(8)) : chance(0.5) ? split(words(5)) : [{ type: "text", text: words(5) }], timestamp: clock.tick() });
			} else if (x < 0.65) {
				const blocks = [];
				if (chance(0.3)) blocks.push({ type: "thinking", thinking: words(6), ...(chance(0.3) ? { thinkingSignature: "sig" } : {}) });
				if (chance(0.8)) blocks.push({ type: "text", text: chance(0.1) ? "   " : words(10) });
				const calls = chance(0.4) ? 1 + Math.floor(r() * 3) : 0;
				for (let k = 0; k < calls; k++) {
					const name = chance(0.05) ? "" : pick(tools);
					const call = { id: `call_${fileSeed}_${step}_${k}`, name };
					blocks.push({ type: "toolCall", id: call.id, name, arguments: argsFor(name) });
					pending.push(call);
				}
				const stop = calls ? "toolUse" : pick(["stop", "stop", "stop", "length", "error", "aborted"]);
				sm.appendMessage({
					role: "assistant", content: blocks, api: "anthropic-messages", provider: "anthropic",
					model: pick(["claude-sonnet-4-5", "claude-opus-4-5"]), usage: usage(), stopReason: stop,
					...(stop === "error" ? { errorMessage: words(3) } : {}), timestamp: clock.tick(),
				});
			} else if (x < 0.68) {
				sm.appendMessage({ role: "bashExecution", command: cut(words(4)), output: cut(words(10)), exitCode: pick([0, 1, 127]), cancelled: chance(0.1), truncated: chance(0.1), ...(chance(0.2) ? { excludeFromContext: true } : {}), timestamp: clock.tick() });
			} else if (x < 0.71) {
				sm.appendCustomMessageEntry(pick(["note", "reminder", "ext"]), chance(0.5) ? words(5) : [{ type: "text", text: words(4) }], chance(0.7), chance(0.5) ? { k: words(1) } : undefined);
			} else if (x < 0.73) {
				sm.appendCustomEntry(pick(["state", "ext"]), { v: words(2) });
			} else if (x < 0.78 && ids.length) {
				sm.appendLabelChange(any(), chance(0.8) ? cut(words(3)) : chance(0.5) ? "" : undefined);
			} else if (x < 0.8) {
				sm.appendSessionInfo(chance(0.8) ? cut(words(4)) : "   ");
			} else if (x < 0.82) {
				sm.appendModelChange(pick(["anthropic", "openai"]), pick(["claude-sonnet-4-5", "gpt-5"]));
			} else if (x < 0.84) {
				sm.appendThinkingLevelChange(pick(["off", "low", "medium", "high"]));
			} else if (x < 0.87 && ids.length) {
				const path = sm.getBranch().map((e) => e.id);
				if (path.length) sm.appendCompaction(words(8), pick(path), Math.floor(r() * 90000), chance(0.5) ? { readFiles: [pick(WORDS)] } : undefined, chance(0.2), chance(0.5) ? usage() : undefined);
			} else if (x < 0.89) {
				const path = sm.getBranch().filter((e) => e.type === "message" && ["user", "assistant", "toolResult"].includes(e.message.role));
				if (path.length) sm.appendContextEdit(pick(path).id, chance(0.5) ? null : { content: words(4) });
			} else if (x < 0.95 && ids.length) {
				pending = [];
				sm.branch(any());
			} else if (x < 0.98 && ids.length) {
				pending = [];
				sm.branchWithSummary(any(), chance(0.8) ? words(8) : "", chance(0.5) ? { readFiles: [], modifiedFiles: [pick(WORDS)] } : undefined, chance(0.3), chance(0.5) ? usage() : undefined);
			} else if (ids.length) {
				pending = [];
				sm.resetLeaf();
			}
		} catch {
			// an operation pi refuses (an entry off the branch): skip it
		}
	}
	// pi writes a session file only once it holds an assistant message.
	if (!existsSync(file)) return null;
	// Damage some files the ways pi tolerates.
	let damage = "";
	if (chance(0.35)) {
		const text = readFileSync(file, "utf8");
		let lines = text.split("\n");
		if (lines[lines.length - 1] === "") lines.pop();
		const d = pick(["delete", "duplicate", "cut-last", "bad-utf8", "garbage", "blank"]);
		const k = 1 + Math.floor(r() * Math.max(1, lines.length - 1));
		damage = d;
		let buf;
		switch (d) {
			case "delete":
				if (lines.length > 2) lines.splice(k, 1);
				break;
			case "duplicate":
				lines.splice(k, 0, lines[Math.min(k, lines.length - 1)]);
				break;
			case "garbage":
				lines.splice(k, 0, pick(["{not json", "42", "null", '"str"', "[1,2]", "{}", '{"type":"message"}']));
				break;
			case "blank":
				lines.splice(k, 0, "   ");
				break;
		}
		buf = Buffer.from(lines.join("\n") + "\n", "utf8");
		if (d === "cut-last") buf = buf.subarray(0, buf.length - 1 - Math.floor(r() * Math.min(40, lines[lines.length - 1].length)));
		if (d === "bad-utf8") {
			// Put invalid UTF-8 at the start of a string value (a text, an id, a
			// type, a name...) of some line after the header.
			const bad = [Buffer.from([0xff]), Buffer.from([0xe2, 0x82]), Buffer.from([0xc3]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xf0, 0x9f, 0x98]), Buffer.from([0x80, 0x80]), Buffer.from([0xf4, 0x90, 0x80, 0x80]), Buffer.from([0xe0, 0x80, 0xaf])];
			const spots = [];
			for (let i = buf.indexOf(0x0a) + 1; i > 0 && i < buf.length - 1; i++) if (buf[i] === 0x3a && buf[i + 1] === 0x22) spots.push(i + 2);
			if (spots.length) {
				const at = pick(spots);
				buf = Buffer.concat([buf.subarray(0, at), pick(bad), buf.subarray(at)]);
			}
		}
		writeFileSync(file, buf);
	}
	return { file, seed: fileSeed, damage };
}

mkdirSync(out, { recursive: true });
if (readdirSync(out).length) {
	process.stderr.write(`random.mjs: ${out} is not empty\n`);
	process.exit(2);
}
const list = [];
for (let i = 0; i < count; i++) {
	const f = gen(seed * 100000 + i);
	if (f) list.push(f);
}
process.stdout.write(JSON.stringify(list) + "\n");
