#!/usr/bin/env node
// gen.mjs writes piweb's demo sessions with pi's own SessionManager, so they
// are valid v3 files as pi writes them. Run from the repository root after
// `cd conformance && npm ci`:
//
//   rm -rf static/demo/--* && node static/demo/gen.mjs
//
// The clock and ids are faked (conformance/determinism.mjs): two runs give the
// same files. parentSession is rewritten relative to the demo root; piweb makes
// it absolute when it copies the demo into a temporary sessions root.

import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { crc32, deflateSync } from "node:zlib";
import { clock, installFakeClock, installSeededRandom, reseed } from "../../conformance/determinism.mjs";

const here = dirname(fileURLToPath(import.meta.url));
installSeededRandom("piweb-demo");
installFakeClock();
const { SessionManager } = await import(
	"../../conformance/node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js"
);

const { generateDiffString, generateUnifiedPatch } = await import(
	"../../conformance/node_modules/@earendil-works/pi-coding-agent/dist/core/tools/edit-diff.js"
);

// editDetails is what pi's edit tool records of a change: its display diff and unified patch.
// The diff library reads the clock; the fake clock is put back so the demo's times stay as they were.
function editDetails(path, before, oldText, newText) {
	const now = clock.now;
	const after = before.replace(oldText, newText);
	const { diff, firstChangedLine } = generateDiffString(before, after);
	const patch = generateUnifiedPatch(path, before, after);
	clock.set(now);
	return { diff, patch, firstChangedLine };
}

const projectDir = (cwd) => join(here, `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);

// A small PNG: a sky-blue card with a sun and a grey cloud, like a forecast widget.
function png(w, h) {
	const raw = Buffer.alloc((w * 3 + 1) * h);
	for (let y = 0; y < h; y++) {
		raw[y * (w * 3 + 1)] = 0;
		for (let x = 0; x < w; x++) {
			let [r, g, b] = [90 + y, 160 + y / 2, 230];
			if ((x - 40) ** 2 + (y - 34) ** 2 < 300) [r, g, b] = [255, 204, 51];
			const cloud = [[80, 50, 16], [100, 44, 20], [120, 52, 15]];
			if (cloud.some(([cx, cy, cr]) => (x - cx) ** 2 + (y - cy) ** 2 < cr * cr)) [r, g, b] = [236, 239, 244];
			if (y > h - 14) [r, g, b] = [40, 44, 52];
			const o = y * (w * 3 + 1) + 1 + x * 3;
			raw[o] = r;
			raw[o + 1] = g;
			raw[o + 2] = b;
		}
	}
	const chunk = (type, data) => {
		const len = Buffer.alloc(4);
		len.writeUInt32BE(data.length);
		const td = Buffer.concat([Buffer.from(type), data]);
		const crc = Buffer.alloc(4);
		crc.writeUInt32BE(crc32(td));
		return Buffer.concat([len, td, crc]);
	};
	const ihdr = Buffer.alloc(13);
	ihdr.writeUInt32BE(w, 0);
	ihdr.writeUInt32BE(h, 4);
	ihdr.set([8, 2, 0, 0, 0], 8);
	return Buffer.concat([
		Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
		chunk("IHDR", ihdr),
		chunk("IDAT", deflateSync(raw)),
		chunk("IEND", Buffer.alloc(0)),
	]).toString("base64");
}

const text = (t) => ({ type: "text", text: t });
const thinking = (t) => ({ type: "thinking", thinking: t, thinkingSignature: "sig" });
const image = () => ({ type: "image", data: png(160, 90), mimeType: "image/png" });
const call = (id, name, args) => ({ type: "toolCall", id, name, arguments: args });

function usage(input, output, cacheRead = 0, cacheWrite = 0) {
	const cost = { input: (input * 3) / 1e6, output: (output * 15) / 1e6, cacheRead: (cacheRead * 0.3) / 1e6, cacheWrite: (cacheWrite * 3.75) / 1e6 };
	cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
	return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost };
}

class Chat {
	constructor(sm, model = "claude-sonnet-4-5") {
		this.sm = sm;
		this.model = { api: "anthropic-messages", provider: "anthropic", model };
		this.n = 0;
	}
	user(content) {
		return this.sm.appendMessage({ role: "user", content, timestamp: clock.tick() });
	}
	assistant(content, tokens = [2400, 160, 1800, 300]) {
		const blocks = typeof content === "string" ? [text(content)] : content;
		const hasCall = blocks.some((b) => b.type === "toolCall");
		return this.sm.appendMessage({ role: "assistant", content: blocks, ...this.model, usage: usage(...tokens), stopReason: hasCall ? "toolUse" : "stop", timestamp: clock.tick() });
	}
	result(id, name, content, isError = false, details) {
		const blocks = typeof content === "string" ? [text(content)] : content;
		return this.sm.appendMessage({ role: "toolResult", toolCallId: id, toolName: name, content: blocks, ...(details ? { details } : {}), isError, timestamp: clock.tick() });
	}
	// tool runs one tool call and its result; returns the result's id.
	tool(name, args, output, { say, think, isError, details } = {}) {
		const id = `toolu_${String(++this.n).padStart(2, "0")}`;
		const blocks = [];
		if (think) blocks.push(thinking(think));
		if (say) blocks.push(text(say));
		blocks.push(call(id, name, args));
		this.assistant(blocks);
		return this.result(id, name, output, isError, details);
	}
}

// ---------------------------------------------------------------------------
// Project 1: /home/dev/weather, the main demo session.

reseed("weather-cache");
clock.set(Date.UTC(2026, 4, 12, 8, 30, 0));
const weatherCwd = "/home/dev/weather";
const sm = SessionManager.create(weatherCwd, projectDir(weatherCwd));
const c = new Chat(sm);
sm.appendMessage({ role: "system", content: "You are pi, a coding agent working in /home/dev/weather. Be concise; run the tests before you claim a fix.", timestamp: clock.tick() });
sm.appendModelChange("anthropic", "claude-sonnet-4-5");
sm.appendThinkingLevelChange("medium");
const ask = c.user("The forecast page sometimes shows **yesterday's** weather after midnight. Can you find out why?");
c.tool("bash", { command: "grep -rn \"cache\" src/forecast" },
	"src/forecast/cache.ts:3:const cache = new Map<string, Entry>();\nsrc/forecast/cache.ts:12:export function cached(city: string) {\nsrc/forecast/api.ts:8:import { cached, store } from \"./cache\";",
	{ think: "Stale data after midnight smells like a cache keyed without the date, or a TTL measured from the wrong clock.", say: "Let me look at how forecasts are cached." });
const cacheTs = "type Entry = { at: number; data: Forecast };\n\nconst cache = new Map<string, Entry>();\nconst TTL = 24 * 60 * 60 * 1000; // one day\n\nexport function store(city: string, data: Forecast) {\n  cache.set(city, { at: Date.now(), data });\n}\n\nexport function cached(city: string) {\n  const e = cache.get(city);\n  if (e && Date.now() - e.at < TTL) return e.data;\n}\n";
const readCache = c.tool("read", { path: "src/forecast/cache.ts" },
	"type Entry = { at: number; data: Forecast };\n\nconst cache = new Map<string, Entry>();\nconst TTL = 24 * 60 * 60 * 1000; // one day\n\nexport function store(city: string, data: Forecast) {\n  cache.set(city, { at: Date.now(), data });\n}\n\nexport function cached(city: string) {\n  const e = cache.get(city);\n  if (e && Date.now() - e.at < TTL) return e.data;\n}\n");
const explain = c.assistant([
	thinking("The key is just the city and the TTL is a full day. A forecast fetched at 23:50 is served until 23:50 the next day, so after midnight the page shows the previous day's forecast."),
	text("Found it. The cache in `src/forecast/cache.ts`:\n\n- is keyed by **city only**, and\n- keeps entries for **24 hours** (`TTL = 24 * 60 * 60 * 1000`).\n\nA forecast fetched at 23:50 is therefore served until 23:50 the *next* day. Two options:\n\n1. key the cache by `city + local date`, or\n2. shorten the TTL to 30 minutes.\n\nI suggest doing both."),
]);
sm.appendLabelChange(ask, "bug report");

// A branch tried and abandoned: drop the cache entirely.
const alt = c.user("Alternatively, could we just drop the cache entirely?");
const altAnswer = c.assistant([
	thinking("Check the API limits before recommending that."),
	text("We could, but the weather API allows only **60 requests per minute** on the free plan, and the home page asks for 12 cities. Without a cache, three visitors a minute would hit the limit."),
]);
sm.appendLabelChange(alt, "rejected idea");
sm.branchWithSummary(explain, "Explored removing the forecast cache entirely. Rejected: the weather API's free plan allows 60 requests/min and the home page requests 12 cities, so the cache must stay.", { readFiles: ["src/forecast/cache.ts"], modifiedFiles: [] }, false, usage(5200, 90));

// The main line: the fix.
c.user("Do both: key by city and date, and use a 30 minute TTL.");
const edit = c.tool("edit", { path: "src/forecast/cache.ts", oldText: "const TTL = 24 * 60 * 60 * 1000; // one day", newText: "const TTL = 30 * 60 * 1000; // 30 minutes" },
	"Error: oldText matched 0 times in src/forecast/cache.ts (the file has CRLF line endings)", { isError: true, say: "Editing the TTL first." });
c.tool("bash", { command: "sed -i 's/\\r$//' src/forecast/cache.ts && git diff --stat" }, " src/forecast/cache.ts | 28 ++++++++++++++--------------\n 1 file changed, 14 insertions(+), 14 deletions(-)",
	{ say: "The file has Windows line endings; normalising them first." });
c.tool("edit", { path: "src/forecast/cache.ts", oldText: "const cache = new Map<string, Entry>();\nconst TTL = 24 * 60 * 60 * 1000; // one day", newText: "const cache = new Map<string, Entry>();\nconst TTL = 30 * 60 * 1000; // 30 minutes\nconst key = (city: string) => `${city}/${new Date().toLocaleDateString(\"sv\")}`;" },
	"Applied 1 edit to src/forecast/cache.ts", { details: editDetails("src/forecast/cache.ts", cacheTs, "const cache = new Map<string, Entry>();\nconst TTL = 24 * 60 * 60 * 1000; // one day", "const cache = new Map<string, Entry>();\nconst TTL = 30 * 60 * 1000; // 30 minutes\nconst key = (city: string) => `${city}/${new Date().toLocaleDateString(\"sv\")}`;") });
const fixed = c.assistant("Done. Entries are now keyed by `city/YYYY-MM-DD` and expire after **30 minutes**:\n\n```ts\nconst TTL = 30 * 60 * 1000; // 30 minutes\nconst key = (city: string) => `${city}/${new Date().toLocaleDateString(\"sv\")}`;\n```\n\n`store` and `cached` use `key(city)`.");
sm.appendLabelChange(fixed, "fix landed");

// The user ran the tests themselves (! in pi's editor).
sm.appendMessage({ role: "bashExecution", command: "npm test -- forecast", output: "> weather@1.4.0 test\n> vitest run forecast\n\n ✓ src/forecast/cache.test.ts (4 tests) 12ms\n ✓ src/forecast/api.test.ts (6 tests) 31ms\n\n Test Files  2 passed (2)\n      Tests  10 passed (10)", exitCode: 0, cancelled: false, truncated: false, timestamp: clock.tick() });
sm.appendCustomMessageEntry("reminder", "Project rule: run `npm run lint` before you commit.", true, { source: "weather/.pi/rules.md" });
c.user([text("Tests pass. Here is the widget now; does it look right?"), image()]);
c.assistant([thinking("Sunny with a cloud, today's date in the footer bar."), text("Yes: the widget shows today's forecast (sun with light clouds), and the footer bar is today's date. The stale-cache bug is gone.")]);

// Check the page template; its HTML must show as text, never run.
c.tool("read", { path: "public/index.html" },
	"<!doctype html>\n<html>\n<head><title>Weather</title></head>\n<body>\n  <div id=\"forecast\"></div>\n  <script>alert('this must stay text in piweb')</script>\n  <script src=\"/app.js\"></script>\n</body>\n</html>\n",
	{ say: "Checking that the page script does not cache too." });
c.assistant("The page itself has no caching; `app.js` fetches `/api/forecast` on load. Nothing else to change.");

// A long tail compacted away, as pi does when the context fills.
c.user("Now refactor api.ts so the cache is injected instead of imported.");
const keep = c.tool("read", { path: "src/forecast/api.ts" }, "import { cached, store } from \"./cache\";\n\nexport async function forecast(city: string) {\n  const hit = cached(city);\n  if (hit) return hit;\n  const data = await fetchForecast(city);\n  store(city, data);\n  return data;\n}\n");
c.tool("edit", { path: "src/forecast/api.ts", oldText: "export async function forecast(city: string) {", newText: "export async function forecast(city: string, cache: Cache = defaultCache) {" }, "Applied 1 edit to src/forecast/api.ts");
c.assistant("`forecast(city, cache)` now takes the cache as a parameter, defaulting to the module cache.", [88000, 240, 1000, 0]);
sm.appendCompaction(
	"## Goal\nFix stale forecasts after midnight in /home/dev/weather, then make the cache injectable.\n\n## Done\n- Cache keyed by `city/date`, TTL 30 min (src/forecast/cache.ts); tests pass.\n- `forecast(city, cache)` takes the cache as a parameter.\n\n## Next\n- Update callers in src/routes/.",
	keep, 91240, { readFiles: ["src/forecast/cache.ts", "src/forecast/api.ts", "public/index.html"], modifiedFiles: ["src/forecast/cache.ts", "src/forecast/api.ts"] }, false, usage(91240, 700));
sm.appendModelChange("anthropic", "claude-opus-4-5");
c.model.model = "claude-opus-4-5";
c.user("Update the callers in src/routes too.");
c.tool("bash", { command: "grep -rln \"forecast(\" src/routes" }, "src/routes/home.ts\nsrc/routes/city.ts");
c.assistant("Both callers use the default cache, so they keep working unchanged. Done.");
sm.appendSessionInfo("Fix stale forecast cache");
const mainFile = sm.getSessionFile();

// A second, older session in the same project.
reseed("weather-dark");
clock.set(Date.UTC(2026, 4, 9, 14, 5, 0));
const sm2 = SessionManager.create(weatherCwd, projectDir(weatherCwd));
const c2 = new Chat(sm2);
c2.user("Add a dark mode to the settings page.");
c2.tool("read", { path: "src/settings/Settings.tsx" }, "export function Settings() {\n  return <form>{/* units, language */}</form>;\n}\n", { say: "Reading the settings page." });
c2.tool("edit", { path: "src/settings/Settings.tsx", oldText: "{/* units, language */}", newText: "{/* units, language */}<ThemeToggle />" }, "Applied 1 edit to src/settings/Settings.tsx");
c2.assistant("Added a `<ThemeToggle />` that stores the choice in `localStorage` and follows `prefers-color-scheme` by default.");

// ---------------------------------------------------------------------------
// Project 2: /home/dev/weather-api, forked from the main session (pi --fork).

reseed("weather-api-fork");
clock.set(Date.UTC(2026, 4, 13, 10, 0, 0));
const apiCwd = "/home/dev/weather-api";
const fork = SessionManager.forkFrom(mainFile, apiCwd, projectDir(apiCwd));
const c3 = new Chat(fork, "claude-opus-4-5");
c3.user("Port the same cache fix to the API service (src/cache.go).");
c3.tool("read", { path: "src/cache.go" }, "var ttl = 24 * time.Hour\n\nfunc key(city string) string { return city }\n", { say: "Same bug here?" });
c3.tool("edit", { path: "src/cache.go", oldText: "var ttl = 24 * time.Hour\n\nfunc key(city string) string { return city }", newText: "var ttl = 30 * time.Minute\n\nfunc key(city string) string { return city + \"/\" + time.Now().Format(time.DateOnly) }" }, "Applied 1 edit to src/cache.go",
	{ details: editDetails("src/cache.go", "var ttl = 24 * time.Hour\n\nfunc key(city string) string { return city }\n", "var ttl = 24 * time.Hour\n\nfunc key(city string) string { return city }", "var ttl = 30 * time.Minute\n\nfunc key(city string) string { return city + \"/\" + time.Now().Format(time.DateOnly) }") });
c3.assistant("Ported: the Go cache now keys by city and date with a 30 minute TTL.");
fork.appendSessionInfo("Port cache fix to the API");

// Make parentSession paths relative to the demo root.
for (const dir of readdirSync(here).filter((d) => d.startsWith("--"))) {
	for (const f of readdirSync(join(here, dir))) {
		const p = join(here, dir, f);
		const lines = readFileSync(p, "utf8").split("\n");
		const h = JSON.parse(lines[0]);
		if (h.parentSession) {
			h.parentSession = relative(here, h.parentSession);
			lines[0] = JSON.stringify(h);
			writeFileSync(p, lines.join("\n"));
		}
		console.log(relative(here, p));
	}
}
