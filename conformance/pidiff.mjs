#!/usr/bin/env node
// pidiff.mjs PKG
//
// pi's side of the randomised differential test (cmd/piweb/diff_test.go).
// Reads requests from stdin, one JSON object a line, and answers each with
// one JSON line on stdout, in order:
//
//   {file, seed}          pick the jobs for the file from its seed and run them
//   {file, jobs: [job]}   run these jobs (the shrinker and the fixed cases)
//
// A job is {kind: "inspect", leaf} (leaf "" = the file's own leaf) or
// {kind: "tree", leaf, filter, search, fold: [ids]}. The answer is
// {jobs, results: [{text} | {error}]}: inspect's text is what `piweb
// inspect [--leaf ID]` must print (pi's reading, JSON.stringify with two
// spaces); tree's is what `piweb tree` must print, from pi's own /tree
// component with no colors. HOME must be the one the Go side passes to
// piweb (paths under it are shown as "~/…").
//
// The deliberate differences in deliberate.json are applied here, to pi's
// side, before anything is compared.
//
// Each job opens a fresh copy of the file: pi may append "\n" to a file it
// opens and branch() moves the leaf for good.

import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { createInterface } from "node:readline";
import { rng } from "./random.mjs";
import { assertPathTerminates, assertTreeTerminates, inspect, loadTreeView, renderTree, writtenVersion } from "./reading.mjs";

const pkg = process.argv[2];
if (!pkg) {
	process.stderr.write("usage: node pidiff.mjs PKG < requests\n");
	process.exit(2);
}
const view = await loadTreeView(pkg);
const { SessionManager } = view;

// The deliberate differences: each one listed in deliberate.json (with its
// reason) has hooks here that make pi's side what piweb does on purpose:
// sm(sm, job) changes pi's reading before a job, list(list, sm, job) pi's
// TreeList before it renders, text(text, job) the text. The two lists must
// name the same ids.
const deliberate = JSON.parse(readFileSync(new URL("./deliberate.json", import.meta.url), "utf8"));
const apply = {
	// piweb draws every line once, as its own node; pi draws the last line
	// with an id once per line that has it (they share a node), and all
	// id-less lines as one node, under which the lines without a parentId
	// member hang. Give the earlier lines of an id, and every id-less line,
	// ids of their own: links and labels to an id still go to its last line,
	// a label or fold on the id applies to each of its lines (as piweb
	// folds and labels by id), and a line without parentId is a root.
	"tree-one-node-per-line": {
		sm(sm, job) {
			if (job.kind !== "tree") return;
			const last = new Map();
			sm.fileEntries.forEach((e, i) => e.type !== "session" && typeof e.id === "string" && last.set(e.id, i));
			const fold = new Set(job.fold ?? []);
			const renamed = [];
			sm.fileEntries = sm.fileEntries.map((e, i) => {
				if (e.type === "session" || (typeof e.id === "string" && last.get(e.id) === i)) return e;
				const id = `${String(e.id)}\u0000line${i}`;
				renamed.push([e.id, id]);
				return { ...e, id };
			});
			if (!renamed.length) return;
			const leaf = sm.leafId;
			sm._buildIndex();
			sm.leafId = leaf;
			for (const [was, id] of renamed) {
				if (typeof was !== "string") continue;
				if (fold.has(was)) fold.add(id);
				if (sm.labelsById.has(was)) {
					sm.labelsById.set(id, sm.labelsById.get(was));
					sm.labelTimestampsById.set(id, sm.labelTimestampsById.get(was));
				}
			}
			job.fold = [...fold];
		},
	},
	// pi's /tree hangs an entry whose parentId is "" under the line whose id
	// is "", though its path (getBranch) stops there: "" is no parent. piweb's
	// tree follows the path: the entry is a root.
	"tree-empty-parent-id": {
		sm(sm, job) {
			if (job.kind !== "tree" || !sm.fileEntries.some((e) => e.parentId === "")) return;
			const leaf = sm.leafId;
			sm.fileEntries = sm.fileEntries.map((e) => (e.parentId === "" ? { ...e, parentId: null } : e));
			sm._buildIndex();
			sm.leafId = leaf;
		},
	},
	// pi throws (reading 'role' of undefined) on a message entry whose
	// message is missing or null, in its context and its /tree; piweb reads
	// it as a message without a role, which JSON.stringify prints as null
	// in the context (what pi would print for the undefined) and the tree
	// shows as [undefined]: an object whose toJSON gives null.
	"message-missing": {
		sm(sm) {
			if (!sm.fileEntries.some((e) => e.type === "message" && e.message == null)) return;
			const leaf = sm.leafId;
			sm.fileEntries = sm.fileEntries.map((e) => (e.type === "message" && e.message == null ? { ...e, message: { toJSON: () => null } } : e));
			sm._buildIndex();
			sm.leafId = leaf;
		},
	},
	// pi finds a tool result's call in a map of every call in the session
	// (the last one drawn wins); piweb looks among the result's nearest 64
	// assistant ancestors, where pi writes the call, so that a row does not
	// depend on other branches.
	"tree-tool-call-ancestors": {
		list(list, sm) {
			let current;
			const display = list.getEntryDisplayText.bind(list);
			list.getEntryDisplayText = (node, selected) => {
				current = node.entry;
				return display(node, selected);
			};
			list.toolCallMap = {
				get(id) {
					let seen = 0;
					for (let a = current?.parentId ? sm.getEntry(current.parentId) : undefined; a && seen < 64; a = a.parentId ? sm.getEntry(a.parentId) : undefined) {
						if (a.type !== "message" || a.message?.role !== "assistant") continue;
						seen++;
						let found;
						for (const c of Array.isArray(a.message.content) ? a.message.content : []) {
							if (c && typeof c === "object" && c.type === "toolCall" && c.id !== "" && c.id === id) found = c;
						}
						if (found) return { name: found.name, arguments: found.arguments };
					}
					return undefined;
				},
				set() {},
				clear() {},
			};
		},
	},
};
for (const d of deliberate) {
	if (!apply[d.id]) throw new Error(`deliberate.json: ${d.id} has no hooks in pidiff.mjs`);
	if (!d.reason) throw new Error(`deliberate.json: ${d.id} gives no reason`);
}
for (const id of Object.keys(apply)) {
	if (!deliberate.some((d) => d.id === id)) throw new Error(`pidiff.mjs: ${id} is not listed in deliberate.json`);
}
const hooks = (name) => deliberate.map((d) => apply[d.id][name]).filter(Boolean);

export const FILTERS = ["default", "no-tools", "user-only", "labeled-only", "all"];

// Search queries: letters whose lower case JavaScript maps specially
// (final sigma, dotted capital I, Kelvin sign, ligatures), emoji, words the
// generator writes, role names and tool names.
const QUERIES = [
	"σ", "ς", "Σ", "İ", "i̇", "i", "I", "ı", "ß", "ss", "ΣΟΦΙΑ", "σοφός", "οδος", "ǅ", "ǆ", "K", "k", "Å", "å", "ﬁ",
	"fi", "é", "e\u0301", "😀", "👩", "中文", "user", "assistant", "[bash]", "~/x", "home", "cart total", "TEST fix",
	"istanbul", "strasse", "\"quoted\"", "back\\slash", "λ", "Ω", "ω", "custom", "label", "compaction", "branch",
];

/** The jobs for a file, from its seed and its entries as pi reads them. */
function pickJobs(seed, ids) {
	const r = rng(`jobs/${seed}`);
	const leaf = () => (ids.length && r.chance(0.7) ? r.pick(ids) : "");
	const jobs = [{ kind: "inspect", leaf: "" }];
	for (let k = 0; k < 3 && ids.length; k++) jobs.push({ kind: "inspect", leaf: r.pick(ids) });
	for (const filter of FILTERS) jobs.push({ kind: "tree", leaf: "", filter, search: "", fold: [] });
	for (let k = 0; k < 2; k++) jobs.push({ kind: "tree", leaf: leaf(), filter: r.pick(FILTERS), search: "", fold: [] });
	for (let k = 0; k < 4; k++) {
		const q = r.chance(0.3) ? `${r.pick(QUERIES)} ${r.pick(QUERIES)}` : r.pick(QUERIES);
		jobs.push({ kind: "tree", leaf: leaf(), filter: r.pick(FILTERS), search: q, fold: [] });
	}
	for (let k = 0; k < 2 && ids.length; k++) {
		const fold = [];
		for (let n = 1 + r.int(3); n > 0; n--) fold.push(r.pick(ids));
		jobs.push({ kind: "tree", leaf: leaf(), filter: r.pick(FILTERS), search: r.chance(0.3) ? r.pick(QUERIES) : "", fold });
	}
	return jobs;
}

/** Open a fresh copy of file with pi; fn(sm, version) runs on it. */
function withCopy(file, fn) {
	if (statSync(file).size === 0) throw new Error("empty file");
	const text = readFileSync(file, "utf8");
	const dir = mkdtempSync(join(tmpdir(), "pidiff-"));
	try {
		const copy = join(dir, basename(file));
		copyFileSync(file, copy);
		const sm = SessionManager.open(copy, dir);
		assertTreeTerminates(sm.getEntries());
		return fn(sm, writtenVersion(text));
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

function run(file, job) {
	job = structuredClone(job); // hooks may change it
	try {
		return {
			text: withCopy(file, (sm, version) => {
				for (const h of hooks("sm")) h(sm, job);
				let text;
				if (job.kind === "inspect") {
					if (job.leaf) sm.branch(job.leaf);
					assertPathTerminates(sm);
					text = `${JSON.stringify(inspect(sm, version), null, 2)}\n`;
				} else {
					text = renderTree(view, sm, job, (list) => {
						for (const h of hooks("list")) h(list, sm, job);
					});
				}
				for (const h of hooks("text")) text = h(text, job);
				return text;
			}),
		};
	} catch (error) {
		return { error: String(error.message ?? error) };
	}
}

function answer(req) {
	let jobs = req.jobs;
	if (!jobs) {
		let ids = [];
		try {
			ids = withCopy(req.file, (sm) => sm.getEntries().map((e) => e.id).filter((id) => typeof id === "string"));
		} catch {}
		jobs = pickJobs(req.seed, [...new Set(ids)]);
	}
	return { jobs, results: jobs.map((job) => run(req.file, job)) };
}

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
	if (!line.trim()) continue;
	process.stdout.write(`${JSON.stringify(answer(JSON.parse(line)))}\n`);
}
