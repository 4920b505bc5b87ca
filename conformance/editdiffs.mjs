#!/usr/bin/env node
// editdiffs.mjs prints, as JSON, what pi's edit tool records for a set of
// changes: each case's text before and after, pi's display diff
// (details.diff) and unified patch (details.patch). piweb's patch package
// tests read its output, committed as patch/testdata/pi-edits.json:
//
//   node conformance/editdiffs.mjs > patch/testdata/pi-edits.json
import { installFakeClock } from "./determinism.mjs";

installFakeClock();
const { generateDiffString, generateUnifiedPatch } = await import(
	new URL("./node_modules/@earendil-works/pi-coding-agent/dist/core/tools/edit-diff.js", import.meta.url)
);

const lines = (n, f) => Array.from({ length: n }, (_, i) => f(i + 1)).join("\n") + "\n";
const long = lines(60, (i) => `line ${i}`);
const cases = [
	["one line", "a\nb\nc\n", "a\nB\nc\n"],
	["insert at top", "a\nb\n", "new\na\nb\n"],
	["append at end", "a\nb\n", "a\nb\nc\nd\n"],
	["delete lines", "a\nb\nc\nd\ne\n", "a\ne\n"],
	["two far hunks", long, long.replace("line 5\n", "line five\n").replace("line 50\n", "line fifty\nline fifty-one\n")],
	["three hunks, growing and shrinking", long, long.replace("line 3\n", "").replace("line 30\n", "x\ny\nz\n").replace("line 58\n", "")],
	["no newline at end", "a\nb", "a\nc"],
	["unicode", "naïve ☃\n日本\n", "naïve ☃☃\n日本語\n"],
	["empty before", "", "hello\nworld\n"],
	["near hunks", long, long.replace("line 10\n", "ten\n").replace("line 16\n", "sixteen\n")],
];
const out = cases.map(([name, before, after]) => ({
	name,
	before,
	after,
	diff: generateDiffString(before, after).diff,
	patch: generateUnifiedPatch("src/file.txt", before, after),
}));
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
