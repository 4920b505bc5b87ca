#!/usr/bin/env node
// pitree.mjs PKG < jobs.json
//
// Renders the tree list of pi's own /tree view (TreeList in
// dist/modes/interactive/components/tree-selector.js of the pi-coding-agent
// package at PKG) as plain text, the way `piweb tree` prints it, for each job
// of a JSON array read from stdin: {file, leaf?, filter?, search?, fold?: [ids]}.
// Writes a JSON array with one string (the lines) per job; layout_test.go
// compares them with piweb's Layout.Render. A job with copy: true gives
// instead the JSON of what the tree's ctrl+x copies for each entry (null for
// nothing), in file order, for copytext_test.go.
//
// The component is imported by file path (the package index needs Node 22)
// with a theme that adds no colors. pi may append "\n" to a file it opens,
// so it reads a copy. Tool-call paths are shortened against $HOME, as in pi.

import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

const pkg = process.argv[2];
if (!pkg) {
	process.stderr.write("usage: node pitree.mjs PKG < jobs.json\n");
	process.exit(2);
}
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const jobs = JSON.parse(Buffer.concat(chunks).toString("utf8"));

// A theme without colors: every style returns its text unchanged.
const plain = (_color, s) => s;
globalThis[Symbol.for("@earendil-works/pi-coding-agent:theme")] = {
	fg: plain,
	bg: plain,
	bold: (s) => s,
	italic: (s) => s,
	underline: (s) => s,
	inverse: (s) => s,
	strikethrough: (s) => s,
};

const { SessionManager } = await import(`${pkg}/dist/core/session-manager.js`);
const { TreeSelectorComponent } = await import(`${pkg}/dist/modes/interactive/components/tree-selector.js`);

function render(job) {
	const dir = mkdtempSync(join(tmpdir(), "pitree-"));
	try {
		const copy = join(dir, basename(job.file));
		copyFileSync(job.file, copy);
		const sm = SessionManager.open(copy, dir);
		if (job.leaf) sm.branch(job.leaf);
		const tree = sm.getTree();
		const leafId = sm.getLeafId();
		const height = 2 * (sm.getEntries().length + 10);
		const selector = new TreeSelectorComponent(tree, leafId, height, () => {}, () => {}, () => {}, undefined, job.filter || "default");
		const list = selector.getTreeList();
		if (job.copy) {
			return JSON.stringify(sm.getEntries().map((entry) => list.getEntryCopyText({ entry }) ?? null));
		}
		if (job.search || job.fold?.length) {
			list.searchQuery = job.search ?? "";
			list.foldedNodes = new Set(job.fold ?? []);
			list.applyFilter();
			// Select as pi does when it opens: the leaf or its nearest visible ancestor.
			list.selectedIndex = list.findNearestVisibleIndex(leafId);
		}
		return list.render(100000).map((l) => l.replace(/\x1b\[0m$/, "") + "\n").join("");
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

// A file pi's own tree cannot draw (it throws on some damaged entries) gives
// "pi error: …" for that job, so one such file does not lose the others.
process.stdout.write(
	JSON.stringify(
		jobs.map((job) => {
			try {
				return render(job);
			} catch (error) {
				return `pi error: ${error?.message ?? error}`;
			}
		}),
	),
);
