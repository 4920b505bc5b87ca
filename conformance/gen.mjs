#!/usr/bin/env node
// gen.mjs OUTDIR
//
// Writes conformance session files into OUTDIR (which must be empty or absent)
// and prints a JSON list of {scenario, file, noOracle?, expectError?}:
//   - pi scenarios: written by pi's own SessionManager (create / append* /
//     branch / createBranchedSession), one project folder per cwd, file names
//     as pi makes them;
//   - edge files ("edge-*"): JSONL text written directly, for oddities pi never
//     writes itself but that files in the wild contain.
// noOracle: pi loops forever on the file (parent cycle): do not run oracle.mjs.
// expectError: pi refuses the file; oracle.mjs prints {"error"} and exits 3.
//
// Clock and randomness are faked (determinism.mjs), so a run is reproducible:
// every `new Date()` advances the clock by 1.234 s, ids come from a seeded stream.

import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { clock, installFakeClock, installSeededRandom, RealDate, reseed } from "./determinism.mjs";

if (process.argv.length !== 3) {
	process.stderr.write("usage: node gen.mjs OUTDIR\n");
	process.exit(2);
}
const outDir = resolve(process.argv[2]);
if (existsSync(outDir) && readdirSync(outDir).length > 0) {
	process.stderr.write(`gen: ${outDir} is not empty\n`);
	process.exit(2);
}
mkdirSync(outDir, { recursive: true });

installSeededRandom();
installFakeClock();
const { SessionManager } = await import(
	"./node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js"
);

const results = [];

// pi's folder name for a cwd: leading "/" dropped, "/", "\" and ":" → "-", wrapped in "--".
function projectDir(cwd) {
	return join(outDir, `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
}

// ---------------------------------------------------------------------------
// Message builders (shapes as pi-ai / pi-coding-agent write them)
// ---------------------------------------------------------------------------

const PNG_1PX =
	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

const text = (t) => ({ type: "text", text: t });
const thinking = (t) => ({ type: "thinking", thinking: t, thinkingSignature: "sig-" + t.length });
const image = () => ({ type: "image", data: PNG_1PX, mimeType: "image/png" });
const toolCall = (id, name, args) => ({ type: "toolCall", id, name, arguments: args });

// piEditDetails is what pi's edit tool records of a change (its own functions):
// the display diff and the unified patch. The diff library reads the clock,
// which is put back so the scenario's times stay the same.
const { generateDiffString, generateUnifiedPatch } = await import(
	"./node_modules/@earendil-works/pi-coding-agent/dist/core/tools/edit-diff.js"
);
function piEditDetails(path, before, after) {
	const now = clock.now;
	const { diff, firstChangedLine } = generateDiffString(before, after);
	const patch = generateUnifiedPatch(path, before, after);
	clock.set(now);
	return { diff, patch, firstChangedLine };
}

// Usage with cost at $3 / $15 / $0.30 / $3.75 per million tokens.
function usage(input, output, cacheRead = 0, cacheWrite = 0) {
	const cost = {
		input: (input * 3) / 1e6,
		output: (output * 15) / 1e6,
		cacheRead: (cacheRead * 0.3) / 1e6,
		cacheWrite: (cacheWrite * 3.75) / 1e6,
	};
	cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
	return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost };
}

const TOOLS = [
	{ name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } } } },
	{ name: "bash", description: "Run a command", parameters: { type: "object", properties: { command: { type: "string" } } } },
	{ name: "edit", description: "Edit a file", parameters: { type: "object", properties: { path: { type: "string" } } } },
];

// Thin helper over a SessionManager: each call appends one entry and returns its id.
class Chat {
	constructor(sm) {
		this.sm = sm;
		this.model = { api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5" };
	}
	user(content) {
		return this.sm.appendMessage({ role: "user", content, timestamp: clock.tick() });
	}
	// content: a string (one text block) or an array of blocks.
	assistant(content, { stopReason, errorMessage, model, tokens = [1200, 180, 800, 0] } = {}) {
		const blocks = typeof content === "string" ? [text(content)] : content;
		const hasCall = blocks.some((b) => b.type === "toolCall");
		return this.sm.appendMessage({
			role: "assistant",
			content: blocks,
			...(model ?? this.model),
			usage: usage(...tokens),
			stopReason: stopReason ?? (hasCall ? "toolUse" : "stop"),
			...(errorMessage ? { errorMessage } : {}),
			timestamp: clock.tick(),
		});
	}
	toolResult(toolCallId, toolName, content, { isError = false, details } = {}) {
		const blocks = typeof content === "string" ? [text(content)] : content;
		return this.sm.appendMessage({
			role: "toolResult",
			toolCallId,
			toolName,
			content: blocks,
			...(details !== undefined ? { details } : {}),
			isError,
			timestamp: clock.tick(),
		});
	}
	system(content, extra = {}) {
		return this.sm.appendMessage({ role: "system", content, ...extra, timestamp: clock.tick() });
	}
	bash(command, output, extra = {}) {
		return this.sm.appendMessage({
			role: "bashExecution",
			command,
			output,
			exitCode: 0,
			cancelled: false,
			truncated: false,
			...extra,
			timestamp: clock.tick(),
		});
	}
	// A user turn and a plain answer; returns [userId, assistantId].
	turn(question, answer) {
		return [this.user(question), this.assistant(answer)];
	}
}

// ---------------------------------------------------------------------------
// Scenarios written by pi
// ---------------------------------------------------------------------------

let dayIndex = 0;

// Run one scenario with a fresh seed and its own day on the fake clock.
// fn(chat, sm) may return extra {scenario, file} records (e.g. a fork).
function scenario(name, cwd, fn) {
	reseed(name);
	clock.set(Date.UTC(2025, 0, 1 + dayIndex++, 9, 0, 0));
	const sm = SessionManager.create(cwd, projectDir(cwd));
	const file = sm.getSessionFile();
	const extra = fn(new Chat(sm), sm) ?? [];
	results.push({ scenario: name, file }, ...extra);
}

// User / assistant / toolResult with thinking, tool calls (parallel ones too),
// usage with cost, images, an error result, an aborted and an errored reply.
scenario("linear-chat", "/home/dev/webshop", (c, sm) => {
	c.system("You are pi, a coding agent. Be concise.", { toolsAdded: TOOLS });
	sm.appendModelChange("anthropic", "claude-sonnet-4-5");
	sm.appendThinkingLevelChange("medium");
	c.user("Why does `npm test` fail in the cart module?");
	c.assistant(
		[
			thinking("The user wants the failing cart test explained. Run it first."),
			text("Let me run the cart tests."),
			toolCall("toolu_01", "bash", { command: "npm test -- cart" }),
		],
		{ tokens: [2400, 95, 0, 2100] },
	);
	c.toolResult("toolu_01", "bash", "FAIL src/cart.test.ts\n  total(): expected 3, received 2", {
		isError: false,
		details: { exitCode: 1, durationMs: 2140 },
	});
	c.assistant(
		[
			text("Two reads in parallel."),
			toolCall("toolu_02", "read", { path: "src/cart.ts" }),
			toolCall("toolu_03", "read", { path: "docs/cart.png" }),
		],
		{ tokens: [2600, 70, 2100, 0] },
	);
	// Results arrive in a different order than the calls were made.
	c.toolResult("toolu_03", "read", [text("Read image file [image/png]"), image()]);
	c.toolResult("toolu_02", "read", "export function total(items) {\n  return items.length - 1;\n}\n");
	c.assistant([thinking("Off by one."), toolCall("toolu_04", "edit", { path: "src/cart.ts", old: "- 1", new: "" })]);
	c.toolResult("toolu_04", "edit", "Error: old text not found in src/cart.ts", { isError: true });
	c.assistant([toolCall("toolu_05", "edit", { path: "src/cart.ts", old: " - 1;", new: ";" })]);
	c.toolResult("toolu_05", "edit", "Applied 1 edit to src/cart.ts", { details: { diff: "-  return items.length - 1;\n+  return items.length;" } });
	c.assistant("Fixed: `total()` subtracted one. The cart tests pass now.", { tokens: [3100, 40, 2600, 0] });
	c.user([text("Here is the page after the fix, looks right?"), image()]);
	c.assistant([], { stopReason: "aborted", errorMessage: "Request was aborted", tokens: [0, 0, 0, 0] });
	c.user("Retry please");
	c.assistant([], { stopReason: "error", errorMessage: "529 overloaded_error: Overloaded", tokens: [0, 0, 0, 0] });
	c.user("Retry again");
	c.assistant([thinking("Image shows the cart with 3 items."), text("Yes: the badge shows 3 items.")]);
});

// Going back and continuing, several times; a regenerated reply (sibling
// assistants); three roots via resetLeaf().
scenario("branches", "/home/dev/webshop", (c, sm) => {
	const [, a1] = c.turn("Add a dark mode toggle", "Where should it live: header or settings?");
	const [u2] = c.turn("In the header, use CSS variables", "Done with CSS variables.");
	const [, a3] = c.turn("Also persist the choice", "Saved in localStorage.");
	sm.branch(a1);
	const [, a2b] = c.turn("In the header, with a Tailwind class", "Done with the `dark` class.");
	sm.branch(u2);
	c.assistant("(regenerated) Implemented with CSS custom properties.");
	sm.branch(a2b);
	c.turn("And follow the OS setting", "Using prefers-color-scheme.");
	sm.resetLeaf();
	c.turn("Start over: what is the project layout?", "src/, test/, docs/.");
	sm.resetLeaf();
	c.turn("Unrelated: how do I update node?", "Use nvm install --lts.");
	sm.branch(a3);
	c.turn("Add a test for it", "Added test/theme.test.ts.");
});

// Labels set, changed and cleared ("" and undefined), labels written on
// another branch (file order wins), a label on a label entry.
scenario("labels", "/home/dev/api", (c, sm) => {
	const [u1, a1] = c.turn("List the API routes", "GET /users, POST /users, GET /orders.");
	const [u2, a2] = c.turn("Which ones lack auth?", "POST /users.");
	sm.appendLabelChange(u1, "start");
	sm.appendLabelChange(u1, "start-v2");
	sm.appendLabelChange(a1, "routes");
	sm.appendLabelChange(a1, "");
	sm.appendLabelChange(u2, "auth question");
	sm.appendLabelChange(u2, undefined);
	const keep = sm.appendLabelChange(a2, "keep");
	sm.appendLabelChange(keep, "label on a label");
	sm.branch(a1);
	const [u2b] = c.turn("Which ones are slow?", "GET /orders.");
	sm.appendLabelChange(u2b, "perf");
	sm.appendLabelChange(u1, "start-final"); // targets the main branch, written on this one
	sm.branch(a2);
	c.turn("Add auth to POST /users", "Added the middleware.");
});

// Compaction keeping entries from firstKeptEntryId (a system message inside the
// kept range is skipped); system messages before and after the compaction.
scenario("compaction-kept", "/home/dev/api", (c, sm) => {
	c.system("You are pi.", { toolsAdded: TOOLS, sections: { style: "<style>terse</style>" } });
	c.user("Profile the orders endpoint");
	c.assistant([toolCall("toolu_11", "bash", { command: "npm run bench orders" })]);
	c.toolResult("toolu_11", "bash", "orders: 840 ms p95");
	const a2 = c.assistant("p95 is 840 ms; the N+1 query is the cause.");
	c.system("Also report memory use.", { sections: { style: "<style>detailed</style>" } });
	c.turn("Fix the N+1", "Batched the query; p95 is 120 ms.");
	sm.appendCompaction(
		"User profiled /orders; an N+1 query was fixed (840 ms → 120 ms).",
		a2,
		48213,
		{ readFiles: ["src/orders.ts"], modifiedFiles: ["src/orders.ts"] },
		false,
		usage(48213, 600),
	);
	c.system("Now prefer SQL over ORM helpers.", { sections: { style: null }, toolsRemoved: [{ name: "edit" }] });
	c.turn("Anything else slow?", "GET /users at 300 ms.");
});

// Compaction whose firstKeptEntryId is its own id (undefined passed): nothing
// before it is kept.
scenario("compaction-self", "/home/dev/api", (c, sm) => {
	c.turn("Write a migration for the users table", "Created 0003_users.sql.");
	c.turn("Add an index on email", "Added.");
	sm.appendCompaction("Wrote migration 0003 with an email index.", undefined, 10500);
	c.turn("Run it", "Migration applied.");
});

// Two compactions on one path; the second keeps entries from before the first
// (so the first sits in the kept range); side branches before each compaction.
scenario("compaction-twice", "/home/dev/api", (c, sm) => {
	const [, a1] = c.turn("Set up CI", "Added .github/workflows/ci.yml.");
	const [u2] = c.turn("Cache node_modules", "Added actions/cache.");
	sm.appendCompaction("Set up CI with caching.", u2, 20000, { readFiles: [] });
	const [, a3] = c.turn("Add a lint job", "Added eslint job.");
	c.turn("Run tests on node 20 and 22", "Matrix added.");
	sm.appendCompaction("CI: caching, lint, node matrix.", u2, 35000, undefined, true);
	c.turn("Deploy on tag", "Added a deploy job on tags.");
	sm.branch(a3);
	c.turn("Lint only changed files", "Using --cache.");
	sm.branch(a1);
	c.turn("Use GitLab instead", "Wrote .gitlab-ci.yml.");
});

// A compaction whose firstKeptEntryId is on another branch: keeps nothing before it.
scenario("compaction-offpath", "/home/dev/api", (c, sm) => {
	const [, a1] = c.turn("Explain the auth flow", "JWT issued at /login.");
	const [u2] = c.turn("Where is the secret?", "In env JWT_SECRET.");
	sm.branch(a1);
	c.turn("How long do tokens live?", "1 hour.");
	sm.appendCompaction("Auth: JWT from /login, 1 h lifetime.", u2, 9000);
	c.turn("Make it 15 minutes", "Changed expiresIn to 15m.");
});

// Context edits: null (drop), string on assistant and toolResult (pi stores a
// text block), string and block content on user, two edits of one target, an
// edit of a custom_message; then a branch where none of the edits apply.
scenario("context-edits", "/home/dev/cli", (c, sm) => {
	const u1 = c.user("Summarize the README");
	const a1 = c.assistant([text("Reading it."), toolCall("toolu_21", "read", { path: "README.md" })]);
	const t1 = c.toolResult("toolu_21", "read", "# cli\n\nA very long README ...\n".repeat(20));
	const a2 = c.assistant("It is a CLI for managing dotfiles.");
	const u2 = c.user("Shorter please");
	const cm = sm.appendCustomMessageEntry("file-context", "Open file: src/main.ts", true, { path: "src/main.ts" });
	c.assistant("Dotfile manager.");
	sm.appendContextEdit(u1, { content: "Summarize README.md (edited)" });
	sm.appendContextEdit(a1, { content: "[call elided]" });
	sm.appendContextEdit(t1, { content: "[README elided]" });
	sm.appendContextEdit(a2, null);
	sm.appendContextEdit(u2, { content: [text("Shorter, please:"), image()] });
	sm.appendContextEdit(t1, { content: [text("[README elided, second edit]")] });
	sm.appendContextEdit(cm, { content: "Open file: (elided)" });
	c.turn("Thanks", "You're welcome.");
	sm.branch(a2);
	c.turn("What language is it in?", "Go.");
});

// branchWithSummary: with text, with "" (no context message), to null (a new
// root), and from a reset leaf (fromId "root").
scenario("branch-summaries", "/home/dev/cli", (c, sm) => {
	const [, a1] = c.turn("Refactor config loading", "Plan: classes per source.");
	c.turn("Go ahead", "Refactored into ConfigSource classes.");
	c.turn("Tests fail now", "The env source ignores prefixes.");
	sm.branchWithSummary(a1, "Tried ConfigSource classes; tests broke on env prefixes. Abandoned.", {
		readFiles: ["src/config.ts"],
		modifiedFiles: ["src/config.ts"],
	});
	const [u2b, a2b] = c.turn("Refactor with plain functions instead", "Done with loadFile/loadEnv.");
	sm.branchWithSummary(u2b, "", undefined, true, usage(900, 120));
	c.assistant("(regenerated) Functions loadFile, loadEnv, merge.");
	sm.branch(a2b);
	sm.branchWithSummary(null, "Whole conversation: config refactor with functions.");
	c.turn("New topic: release notes", "Drafted CHANGELOG entry.");
	sm.resetLeaf();
	sm.branchWithSummary(null, "Started from nothing.");
	c.turn("Hello again", "Hi.");
});

// custom entries (with and without data), custom_message entries (string and
// block content, display true/false, with and without details), usage entries.
scenario("custom-entries", "/home/dev/cli", (c, sm) => {
	sm.appendCustomEntry("todo-state", { items: [{ text: "write docs", done: false }] });
	c.turn("Start on the docs", "Created docs/index.md.");
	sm.appendCustomEntry("bare-marker");
	sm.appendCustomMessageEntry("reminder", "Remember to run the tests before committing.", true, { source: "hook" });
	sm.appendCustomMessageEntry("attachment", [text("Screenshot of the docs site:"), image()], false);
	sm.appendUsage("cache_warm", "anthropic", "claude-sonnet-4-5", usage(0, 0, 0, 5200), "prewarmed the prompt cache");
	c.turn("Continue", "Added the API page.");
	sm.appendUsage("title", "anthropic", "claude-haiku-4-5", usage(300, 12));
	sm.appendCustomEntry("todo-state", { items: [{ text: "write docs", done: true }] });
});

// Session names set and changed (also sanitized by pi: newlines, spaces); the
// last one, on another branch, wins.
scenario("session-name", "/home/dev/cli", (c, sm) => {
	const [, a1] = c.turn("Fix the flaky test", "It depends on wall-clock time.");
	sm.appendSessionInfo("Flaky test");
	c.turn("Mock the clock", "Using a fake timer.");
	sm.appendSessionInfo("  Flaky test:\nfake timers  ");
	sm.branch(a1);
	c.turn("Or retry it?", "Retries hide the bug.");
	sm.appendSessionInfo("Flaky test (final)");
});

// Session name set, changed, then cleared with "".
scenario("session-name-cleared", "/home/dev/cli", (c, sm) => {
	c.turn("Name this session", "Sure.");
	sm.appendSessionInfo("Naming");
	sm.appendSessionInfo("Renamed");
	c.turn("Now clear it", "Cleared.");
	sm.appendSessionInfo("");
});

// model_change, thinking_level_change, assistant messages setting the model;
// the model and level differ per leaf.
scenario("model-thinking", "/home/dev/ml", (c, sm) => {
	sm.appendModelChange("openai", "gpt-5");
	sm.appendThinkingLevelChange("high");
	c.user("Pick a learning rate schedule");
	const a1 = c.assistant("Cosine with warmup.", { model: { api: "openai-responses", provider: "openai", model: "gpt-5" } });
	sm.appendModelChange("google", "gemini-2.5-pro");
	sm.appendThinkingLevelChange("off");
	c.user("Warmup length?");
	c.assistant("5% of steps.", { model: { api: "google-generative-ai", provider: "google", model: "gemini-2.5-pro" } });
	sm.appendModelChange("anthropic", "claude-opus-4-1"); // after the last assistant: wins on this path
	sm.branch(a1);
	sm.appendThinkingLevelChange("low");
	c.turn("Batch size?", "256.");
});

// bashExecution messages (user-run shell commands): success, non-zero exit,
// cancelled (no exit code), truncated with full output path, excluded from context.
scenario("bash-execution", "/home/dev/webshop", (c) => {
	c.turn("I'll run some commands", "OK.");
	c.bash("git status --short", " M src/cart.ts\n");
	c.bash("npm run lint", "src/cart.ts:3:1  error  Missing semicolon", { exitCode: 2 });
	c.bash("npm run dev", "", { exitCode: undefined, cancelled: true });
	c.bash("cat big.log", "line 1\nline 2\n...", { truncated: true, fullOutputPath: "/tmp/pi-bash-1234.log" });
	c.bash("echo secret", "secret\n", { excludeFromContext: true });
	c.turn("What did lint say?", "A missing semicolon in src/cart.ts line 3.");
});

// System messages: string and block content, section updates and removal,
// tools added and removed, before and after a compaction, plus a branch from
// before the compaction.
scenario("system-messages", "/home/dev/ml", (c, sm) => {
	c.system("You are pi.", { toolsAdded: TOOLS, sections: { env: "<env>linux</env>", style: "<style>terse</style>" } });
	const [, a1] = c.turn("Train the baseline", "Started train.py.");
	c.system([text("The user prefers metric units.")], { sections: { env: "<env>linux, 2 GPUs</env>" } });
	const [u2] = c.turn("How long will it take?", "About 40 minutes.");
	c.system("", { toolsRemoved: [{ name: "bash" }], sections: { style: null } });
	sm.appendCompaction("Baseline training started (about 40 min).", u2, 15000);
	c.system("After compaction: keep answers short.");
	c.turn("Status?", "Epoch 3 of 10.");
	sm.branch(a1);
	c.turn("Use mixed precision", "Enabled bf16.");
});

// Messages with null or missing content (old or hand-edited files), and a
// message whose role is "custom" (what v2's hookMessage becomes).
scenario("null-content", "/home/dev/ml", (c, sm) => {
	sm.appendMessage({ role: "system", content: null, timestamp: clock.tick() });
	sm.appendMessage({ role: "user", timestamp: clock.tick() });
	c.assistant("Answer to an empty question.");
	sm.appendMessage({ role: "assistant", content: null, ...c.model, usage: usage(10, 0), stopReason: "stop", timestamp: clock.tick() });
	sm.appendMessage({ role: "toolResult", toolCallId: "toolu_x", toolName: "read", content: null, isError: false, timestamp: clock.tick() });
	sm.appendMessage({ role: "custom", customType: "hook-note", content: "From a hook", display: true, timestamp: clock.tick() });
	c.turn("ok", "ok.");
});

// Children are ordered by entry timestamp, not file order: a later-appended
// sibling with an earlier timestamp, and a tie (file order kept). Roots keep
// file order whatever their timestamps.
scenario("timestamp-order", "/home/dev/api", (c, sm) => {
	const [u1, a1] = c.turn("Name the service", "orders-api.");
	clock.set(clock.now + 60_000);
	const [u2] = c.turn("Shorter?", "oapi.");
	const u2Time = RealDate.parse(sm.getEntry(u2).timestamp);
	sm.branch(a1);
	clock.set(u2Time - 30_000 - clock.step); // entry lands 30 s before u2
	c.turn("Longer?", "orders-management-api.");
	sm.branch(a1);
	clock.set(u2Time - clock.step); // entry lands exactly on u2's timestamp
	c.turn("Same time as 'Shorter?'", "tie.");
	sm.resetLeaf();
	clock.set(RealDate.parse(sm.getEntry(u1).timestamp) - 3_600_000); // a root an hour earlier
	c.turn("Earlier root, later in the file", "ok.");
	sm.branch(u1);
	clock.set(u2Time + 120_000);
	c.assistant("A late second answer to the first question.");
});

// Forks: createBranchedSession on a path holding labels (set, changed, cleared),
// label entries in the middle of the path (re-chaining), a label set from
// another branch on a path entry, and a compaction whose firstKeptEntryId is a
// label id. The fork is then continued.
scenario("fork-source", "/home/dev/webshop", (c, sm) => {
	c.system("You are pi.", { toolsAdded: TOOLS });
	const [u1, a1] = c.turn("Add coupons", "Plan: model, endpoint, UI.");
	sm.appendLabelChange(u1, "task");
	const [u2] = c.turn("Start with the model", "Reading the schema.");
	const a2 = c.assistant([toolCall("toolu_31", "read", { path: "db/schema.sql" })]);
	c.toolResult("toolu_31", "read", "CREATE TABLE orders (...);");
	const keptLabel = sm.appendLabelChange(a2, "tool use");
	sm.appendLabelChange(u1, "task: coupons");
	sm.appendLabelChange(u2, "step 1");
	sm.appendLabelChange(u2, undefined);
	const a3 = c.assistant("Added a coupons table.");
	sm.appendCompaction("Coupons: planned; coupons table added.", keptLabel, 22000);
	const [, a4] = c.turn("Now the endpoint", "POST /coupons added.");
	sm.branch(a1);
	const [u2b] = c.turn("Start with the UI", "Mock-up done.");
	sm.appendLabelChange(u2b, "ui branch"); // not on the forked path
	sm.appendLabelChange(a3, "model done"); // on the forked path, written from here
	sm.branch(a4);
	const sourceFile = sm.getSessionFile();
	const forkFile = sm.createBranchedSession(a4);
	c.turn("Continue in the fork: the UI", "Coupon field added to checkout.");
	// Fork again from the source, this time at a label entry (trailing labels are dropped)
	// and at a compaction right after a label (firstKeptEntryId becomes its own id).
	const src = SessionManager.open(sourceFile);
	const c2 = new Chat(src);
	src.branch(a1);
	const lbl = src.appendLabelChange(a1, "pre-compaction");
	src.appendCompaction("Coupons plan only.", lbl, 5000);
	c2.turn("Plan again", "Same plan.");
	const preLabelLeaf = src.appendLabelChange(u1, "task (again)");
	const fork2File = src.createBranchedSession(preLabelLeaf);
	return [
		{ scenario: "fork", file: forkFile },
		{ scenario: "fork-at-label", file: fork2File },
	];
});

// File changes as pi's own tools record them: a write, edits whose details
// are what pi's edit tool computes (display diff and unified patch), a failed
// edit, a write over an earlier one, and a branch that changed another file.
// piweb's files-changed reading is checked on it (sessions/changes_test.go).
scenario("file-edits", "/home/dev/webshop", (c, sm) => {
	const v1 = "export function total(items) {\n  return items.length;\n}\n";
	const v2 = "export function total(items) {\n  return items.reduce((n, i) => n + i.qty, 0);\n}\n";
	const v3 = "// Cart totals.\n" + v2;
	const ask = c.user("Write src/total.js, then make total() sum the quantities.");
	c.assistant([toolCall("toolu_w1", "write", { path: "src/total.js", content: v1 })]);
	c.toolResult("toolu_w1", "write", "Successfully wrote 52 bytes to src/total.js");
	c.assistant([toolCall("toolu_e1", "edit", { path: "src/total.js", edits: [{ oldText: "return items.length;", newText: "return items.reduce((n, i) => n + i.qty, 0);" }] })]);
	c.toolResult("toolu_e1", "edit", "Successfully replaced 1 block(s) in src/total.js.", { details: piEditDetails("src/total.js", v1, v2) });
	c.assistant([toolCall("toolu_e2", "edit", { path: "src/total.js", edits: [{ oldText: "nope", newText: "x" }] })]);
	c.toolResult("toolu_e2", "edit", "Could not find the exact text in src/total.js.", { isError: true });
	c.assistant([toolCall("toolu_e3", "edit", { path: "src/total.js", edits: [{ oldText: "export function", newText: "// Cart totals.\nexport function" }] })]);
	c.toolResult("toolu_e3", "edit", "Successfully replaced 1 block(s) in src/total.js.", { details: piEditDetails("src/total.js", v2, v3) });
	c.assistant([toolCall("toolu_w2", "write", { path: "README.md", content: "# shop\n" })]);
	c.toolResult("toolu_w2", "write", "Successfully wrote 7 bytes to README.md");
	c.assistant([toolCall("toolu_w3", "write", { path: "README.md", content: "# shop\n\nCart totals sum quantities.\n" })]);
	c.toolResult("toolu_w3", "write", "Successfully wrote 38 bytes to README.md");
	c.assistant([toolCall("toolu_b1", "bash", { command: "npm test" })]);
	c.toolResult("toolu_b1", "bash", "ok");
	c.assistant("Done.");
	// Another attempt from the question: it only wrote a test.
	sm.branch(ask);
	c.assistant([toolCall("toolu_w4", "write", { path: "test/total.test.js", content: "test('total', () => {});\n" })]);
	c.toolResult("toolu_w4", "write", "Successfully wrote 25 bytes to test/total.test.js");
});

// ---------------------------------------------------------------------------
// Hand-made edge files
// ---------------------------------------------------------------------------

const EDGE_CWD = "/home/dev/edges";
const edgeDir = projectDir(EDGE_CWD);
mkdirSync(edgeDir, { recursive: true });

// ISO time n seconds after a fixed instant.
const T0 = Date.UTC(2025, 1, 1, 10, 0, 0);
const iso = (n) => new RealDate(T0 + n * 1000).toISOString();

const header = (id, extra = {}) => ({ type: "session", version: 3, id, timestamp: iso(0), cwd: EDGE_CWD, ...extra });
const user = (id, parentId, n, content) => ({
	type: "message",
	id,
	parentId,
	timestamp: iso(n),
	message: { role: "user", content, timestamp: T0 + n * 1000 - 500 },
});
const asst = (id, parentId, n, t) => ({
	type: "message",
	id,
	parentId,
	timestamp: iso(n),
	message: {
		role: "assistant",
		content: [text(t)],
		api: "anthropic-messages",
		provider: "anthropic",
		model: "claude-sonnet-4-5",
		usage: usage(100, 20),
		stopReason: "stop",
		timestamp: T0 + n * 1000 - 500,
	},
});

// lines: objects (serialized as JSON) or raw strings (written as they are).
// Joined with "\n" plus a final "\n" unless opts.noFinalNewline; opts.eol overrides "\n".
function edge(name, lines, { noOracle, expectError, noFinalNewline, eol = "\n" } = {}) {
	const body = lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join(eol);
	const file = join(edgeDir, `${iso(0).replace(/[:.]/g, "-")}_${name}.jsonl`);
	writeFileSync(file, lines.length === 0 ? "" : noFinalNewline ? body : body + eol);
	results.push({ scenario: name, file, ...(noOracle ? { noOracle } : {}), ...(expectError ? { expectError } : {}) });
}

const H = (name, extra) => header(name, extra);

edge("edge-malformed-middle", [
	H("edge-malformed-middle"),
	user("e1", null, 1, "first"),
	'{"type":"message","id":"e2","parentId":"e1","timestamp":"2025-02-01T10:00:02.000Z","message":{"role":"assi',
	"not json at all",
	asst("e3", "e1", 3, "after the broken lines"),
]);

edge("edge-blank-lines", [
	"",
	"   ",
	H("edge-blank-lines"),
	"",
	user("e1", null, 1, "first"),
	"\t",
	"",
	asst("e2", "e1", 2, "second"),
	"",
]);

edge("edge-crlf", [H("edge-crlf"), user("e1", null, 1, "windows"), asst("e2", "e1", 2, "line endings")], { eol: "\r\n" });

edge("edge-partial-last-line", [H("edge-partial-last-line"), user("e1", null, 1, "q"), asst("e2", "e1", 2, "complete but no newline")], {
	noFinalNewline: true,
});

edge(
	"edge-truncated-last-line",
	[H("edge-truncated-last-line"), user("e1", null, 1, "q"), asst("e2", "e1", 2, "a"), '{"type":"message","id":"e3","parentId":"e2","timest'],
	{ noFinalNewline: true },
);

edge("edge-orphan", [
	H("edge-orphan"),
	user("e1", null, 1, "root"),
	asst("e2", "e1", 2, "answer"),
	user("e3", "gone0000", 3, "my parent was never written"),
	asst("e4", "e3", 4, "child of the orphan"),
]);

edge("edge-missing-parentid", [
	H("edge-missing-parentid"),
	user("e1", null, 1, "root"),
	(() => {
		const e = asst("e2", null, 2, "no parentId key at all");
		delete e.parentId;
		return e;
	})(),
	user("e3", "e2", 3, "child of the key-less one"),
]);

edge("edge-duplicate-ids", [
	H("edge-duplicate-ids"),
	user("e1", null, 1, "root"),
	asst("e2", "e1", 2, "first e2"),
	user("e3", "e2", 3, "child of e2"),
	asst("e2", "e1", 4, "second e2 (same id, same parent)"),
	user("e1", null, 5, "second e1 (root again)"),
	asst("e4", "e3", 6, "leaf"),
]);

edge("edge-unknown-type-leaf", [
	H("edge-unknown-type-leaf"),
	user("e1", null, 1, "q"),
	asst("e2", "e1", 2, "a"),
	{ type: "future_thing", id: "e3", parentId: "e2", timestamp: iso(3), payload: { x: 1 } },
]);

edge("edge-label-no-key", [
	H("edge-label-no-key"),
	user("e1", null, 1, "q"),
	asst("e2", "e1", 2, "a"),
	{ type: "label", id: "l1", parentId: "e2", timestamp: iso(3), targetId: "e1", label: "important" },
	{ type: "label", id: "l2", parentId: "l1", timestamp: iso(4), targetId: "e2", label: "answer" },
	{ type: "label", id: "l3", parentId: "l2", timestamp: iso(5), targetId: "e1" },
	{ type: "label", id: "l4", parentId: "l3", timestamp: iso(6), targetId: "missing1", label: "dangling target" },
]);

// Labels that are not strings: pi keeps the truthy value as it is (42, true,
// an object) and a falsy one (0) clears.
edge("edge-label-non-string", [
	H("edge-label-non-string"),
	user("e1", null, 1, "q"),
	asst("e2", "e1", 2, "a"),
	user("e3", "e2", 3, "more"),
	{ type: "label", id: "l1", parentId: "e3", timestamp: iso(4), targetId: "e1", label: 42 },
	{ type: "label", id: "l2", parentId: "l1", timestamp: iso(5), targetId: "e2", label: true },
	{ type: "label", id: "l3", parentId: "l2", timestamp: iso(6), targetId: "e3", label: { note: "obj", n: [1, 2] } },
	{ type: "label", id: "l4", parentId: "l3", timestamp: iso(7), targetId: "l1", label: "string" },
	{ type: "label", id: "l5", parentId: "l4", timestamp: iso(8), targetId: "l1", label: 0 },
	{ type: "label", id: "l6", parentId: "l5", timestamp: iso(9), targetId: "l2", label: [] },
	{ type: "label", id: "l7", parentId: "l6", timestamp: iso(10), targetId: "l3", label: [1, [2, null], { a: 1 }, 1e21] },
	{ type: "label", id: "l8", parentId: "l7", timestamp: iso(11), targetId: "l4", label: 1e-7 },
]);

edge("edge-session-info-empty", [
	H("edge-session-info-empty"),
	user("e1", null, 1, "q"),
	{ type: "session_info", id: "s1", parentId: "e1", timestamp: iso(2), name: "Named" },
	{ type: "session_info", id: "s2", parentId: "s1", timestamp: iso(3), name: "" },
]);

edge("edge-session-info-blank", [
	H("edge-session-info-blank"),
	user("e1", null, 1, "q"),
	{ type: "session_info", id: "s1", parentId: "e1", timestamp: iso(2), name: "Named" },
	{ type: "session_info", id: "s2", parentId: "s1", timestamp: iso(3), name: "   " },
]);

edge("edge-session-info-no-key", [
	H("edge-session-info-no-key"),
	user("e1", null, 1, "q"),
	{ type: "session_info", id: "s1", parentId: "e1", timestamp: iso(2), name: "  padded name  " },
	{ type: "session_info", id: "s2", parentId: "s1", timestamp: iso(3) },
	{ type: "session_info", id: "s3", parentId: "s2", timestamp: iso(4), name: "  kept after key-less  " },
]);

// v1: no version, no ids/parentIds; compaction with firstKeptEntryIndex (an
// index into the parsed lines, header = 0).
const v1 = (e) => {
	delete e.id;
	delete e.parentId;
	return e;
};
edge("edge-v1", [
	{ type: "session", id: "edge-v1", timestamp: iso(0), cwd: EDGE_CWD },
	v1(user("x", null, 1, "old question")),
	v1(asst("x", null, 2, "old answer")),
	"",
	"garbage line",
	v1(user("x", null, 3, "second question")),
	v1(asst("x", null, 4, "second answer")),
	{ type: "compaction", timestamp: iso(5), summary: "Two questions answered.", firstKeptEntryIndex: 3, tokensBefore: 4000 },
	v1(user("x", null, 6, "after compaction")),
	{ type: "thinking_level_change", timestamp: iso(7), thinkingLevel: "high" },
	{ type: "compaction", timestamp: iso(8), summary: "Index 0 is the header.", firstKeptEntryIndex: 0, tokensBefore: 10 },
	{ type: "compaction", timestamp: iso(9), summary: "Index out of range.", firstKeptEntryIndex: 99, tokensBefore: 11 },
	v1(asst("x", null, 10, "last")),
]);

// v1 with a second header line: firstKeptEntryIndex counts it (index 3 is
// the second question, not the extra header's neighbour).
edge("edge-v1-extra-header", [
	{ type: "session", id: "edge-v1-extra-header", timestamp: iso(0), cwd: EDGE_CWD },
	v1(user("x", null, 1, "old question")),
	{ type: "session", id: "edge-v1-extra-header-2", timestamp: iso(1), cwd: EDGE_CWD },
	v1(user("x", null, 2, "second question")),
	v1(asst("x", null, 3, "second answer")),
	{ type: "compaction", timestamp: iso(4), summary: "Kept from the second question.", firstKeptEntryIndex: 3, tokensBefore: 400 },
	{ type: "compaction", timestamp: iso(5), summary: "Index 2 is the extra header.", firstKeptEntryIndex: 2, tokensBefore: 10 },
	v1(user("x", null, 6, "after")),
]);

// v1 with a non-object line: pi's migration assigns .id on the number 42.
edge(
	"edge-v1-nonobject",
	[{ type: "session", id: "edge-v1-nonobject", timestamp: iso(0), cwd: EDGE_CWD }, v1(user("x", null, 1, "q")), "42", v1(asst("x", null, 2, "a"))],
	{ expectError: true },
);

edge("edge-v2-hookmessage", [
	H("edge-v2-hookmessage", { version: 2 }),
	user("e1", null, 1, "q"),
	{
		type: "message",
		id: "e2",
		parentId: "e1",
		timestamp: iso(2),
		message: { role: "hookMessage", customType: "lint", content: "3 lint errors", display: true, timestamp: T0 + 1500 },
	},
	asst("e3", "e2", 3, "I'll fix them."),
]);

edge("edge-future-version", [H("edge-future-version", { version: 4 }), user("e1", null, 1, "q"), asst("e2", "e1", 2, "a")]);

edge("edge-last-line-no-id", [
	H("edge-last-line-no-id"),
	user("e1", null, 1, "q"),
	asst("e2", "e1", 2, "a"),
	(() => {
		const e = user("x", "e2", 3, "I have a parent but no id");
		delete e.id;
		return e;
	})(),
]);

edge("edge-branch-summary-missing-from", [
	H("edge-branch-summary-missing-from"),
	user("e1", null, 1, "q"),
	asst("e2", "e1", 2, "a"),
	{ type: "branch_summary", id: "b1", parentId: "e2", timestamp: iso(3), fromId: "deadbeef", summary: "Came back from a branch that is gone." },
	{ type: "branch_summary", id: "b2", parentId: "b1", timestamp: iso(4), fromId: "root", summary: "" },
	user("e3", "b2", 5, "go on"),
]);

edge("edge-non-object-lines", [
	H("edge-non-object-lines"),
	user("e1", null, 1, "q"),
	"42",
	"[1]",
	'"x"',
	"null",
	"0",
	"false",
	"true",
	asst("e2", "e1", 2, "a"),
	(() => {
		const e = user("e3", null, 3, "parentId key missing");
		delete e.parentId;
		return e;
	})(),
]);

edge("edge-header-only", [H("edge-header-only")]);
edge("edge-header-only-no-newline", [H("edge-header-only-no-newline")], { noFinalNewline: true });

edge("edge-second-header", [
	H("edge-second-header"),
	user("e1", null, 1, "q"),
	{ type: "session", version: 3, id: "other-session", timestamp: iso(2), cwd: "/elsewhere" },
	asst("e2", "e1", 3, "a"),
]);

edge("edge-timestamp-formats", [
	H("edge-timestamp-formats"),
	user("e1", null, 1, "root"),
	// Siblings: file order is the reverse of time order, and string order lies.
	{ ...asst("e2", "e1", 0, "at 10:00:30Z"), timestamp: "2025-02-01T10:00:30.000Z" },
	{ ...asst("e3", "e1", 0, "at 10:00:20Z written with +02:00"), timestamp: "2025-02-01T12:00:20+02:00" },
	{ ...asst("e4", "e1", 0, "at 10:00:10Z without millis"), timestamp: "2025-02-01T10:00:10Z" },
	{ ...asst("e5", "e1", 0, "at 10:00:10.000Z, ties e4"), timestamp: "2025-02-01T10:00:10.000Z" },
	// Two siblings of e2, the second with an unparsable timestamp (comparison NaN: kept in file order).
	{ ...user("e6", "e2", 0, "valid"), timestamp: "2025-02-01T10:01:00.000Z" },
	{ ...user("e7", "e2", 0, "invalid timestamp"), timestamp: "not a date" },
]);

// Context edits pi's API would refuse or normalize: an edit written before its
// target, a raw string for an assistant, edits of a system message, a branch
// summary, a compaction and a missing id.
const sys = (id, parentId, n, content) => ({ type: "message", id, parentId, timestamp: iso(n), message: { role: "system", content, timestamp: T0 + n * 1000 - 500 } });
const cedit = (id, parentId, n, targetId, replacement) => ({ type: "context_edit", id, parentId, timestamp: iso(n), targetId, replacement });
edge("edge-context-edit-odd", [
	H("edge-context-edit-odd"),
	sys("s1", null, 1, "before the kept range"),
	cedit("x1", "s1", 2, "e2", { content: "raw string on assistant, edit before its target" }),
	user("e1", "x1", 3, "q"),
	asst("e2", "e1", 4, "a"),
	{ type: "branch_summary", id: "b1", parentId: "e2", timestamp: iso(5), fromId: "e1", summary: "branch summary" },
	{ type: "custom_message", id: "c1", parentId: "b1", timestamp: iso(6), customType: "note", content: [text("block")], display: true },
	cedit("x3", "c1", 7, "b1", { content: "edited summary" }),
	cedit("x4", "x3", 8, "c1", { content: "string on custom" }),
	cedit("x5", "x4", 9, "nope0000", null),
	{ type: "compaction", id: "k1", parentId: "x5", timestamp: iso(10), summary: "compacted", firstKeptEntryId: "x1", tokensBefore: 100 },
	cedit("x6", "k1", 11, "k1", null),
	sys("s3", "x6", 12, "system after compaction"),
	cedit("x8", "s3", 13, "s3", { content: "edited system" }),
	sys("s4", "x8", 14, "system to drop"),
	cedit("x9", "s4", 15, "s4", null),
	user("e3", "x9", 16, "after"),
]);

edge("edge-compaction-missing-kept", [
	H("edge-compaction-missing-kept"),
	user("e1", null, 1, "q"),
	asst("e2", "e1", 2, "a"),
	{ type: "compaction", id: "k1", parentId: "e2", timestamp: iso(3), summary: "kept id is gone", firstKeptEntryId: "gone0000", tokensBefore: 50 },
	user("e3", "k1", 4, "after"),
]);

// Parent cycles: pi loops forever walking them. Never give these to the oracle.
edge(
	"edge-cycle",
	[H("edge-cycle"), user("e1", null, 1, "root"), asst("c1", "c2", 2, "cycle A"), user("c2", "c1", 3, "cycle B")],
	{ noOracle: true },
);
edge("edge-self-parent", [H("edge-self-parent"), user("e1", null, 1, "root"), asst("e2", "e2", 2, "I am my own parent"), user("e3", "e1", 3, "leaf")], {
	noOracle: true,
});

// Files pi refuses.
edge("edge-not-session", [user("e1", null, 1, "no header"), asst("e2", "e1", 2, "a")], { expectError: true });
edge("edge-header-no-id", [{ type: "session", version: 3, timestamp: iso(0), cwd: EDGE_CWD }, user("e1", null, 1, "q")], { expectError: true });
edge("edge-empty", [], { expectError: true });

process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
