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
import { loadTreeView, renderTree } from "./reading.mjs";

const pkg = process.argv[2];
if (!pkg) {
	process.stderr.write("usage: node pitree.mjs PKG < jobs.json\n");
	process.exit(2);
}
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const jobs = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const view = await loadTreeView(pkg);

function render(job) {
	const dir = mkdtempSync(join(tmpdir(), "pitree-"));
	try {
		const copy = join(dir, basename(job.file));
		copyFileSync(job.file, copy);
		return renderTree(view, view.SessionManager.open(copy, dir), job);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

process.stdout.write(JSON.stringify(jobs.map(render)));
