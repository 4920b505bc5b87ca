// reading.mjs: pi's reading of a session, shared by oracle.mjs and pidiff.mjs.
//
// inspect(sm, version) is what `piweb inspect` must print; the two checks
// throw an OracleError (exit code 4) where pi itself would loop forever.

export class OracleError extends Error {
	constructor(message, exitCode) {
		super(message);
		this.exitCode = exitCode;
	}
}

// The header's version as written, before pi migrates anything. Mirrors pi's
// loader: split on "\n", skip blank lines, unparsable lines and falsy JSON values;
// the first value left is the header.
export function writtenVersion(text) {
	for (const line of text.split("\n")) {
		if (!line.trim()) continue;
		let value;
		try {
			value = JSON.parse(line);
		} catch {
			continue;
		}
		if (!value) continue;
		return value.version ?? 1;
	}
	return 1;
}

// pi's getTree() spins forever if, through duplicate ids, its node graph has a
// cycle reachable from a root. Mirror its linking (nodes keyed by id, last entry
// wins) and look for such a cycle before calling it.
export function assertTreeTerminates(entries) {
	const keys = new Set(entries.map((e) => e.id));
	const children = new Map(); // key -> child keys
	const roots = [];
	for (const e of entries) {
		if (e.parentId === null || e.parentId === e.id || !keys.has(e.parentId)) {
			roots.push(e.id);
		} else {
			if (!children.has(e.parentId)) children.set(e.parentId, []);
			children.get(e.parentId).push(e.id);
		}
	}
	// Iterative DFS with colours: 1 = on the current stack, 2 = done.
	const colour = new Map();
	for (const root of roots) {
		if (colour.get(root) === 2) continue;
		const stack = [[root, 0]];
		colour.set(root, 1);
		while (stack.length > 0) {
			const frame = stack[stack.length - 1];
			const kids = children.get(frame[0]) ?? [];
			if (frame[1] >= kids.length) {
				colour.set(frame[0], 2);
				stack.pop();
				continue;
			}
			const kid = kids[frame[1]++];
			if (colour.get(kid) === 1) {
				throw new OracleError(`parent cycle through ${JSON.stringify(kid)}: pi's getTree() would loop forever`, 4);
			}
			if (colour.get(kid) !== 2) {
				colour.set(kid, 1);
				stack.push([kid, 0]);
			}
		}
	}
}

// pi's getBranch() / buildSessionContext() walk parentId links with no cycle
// check. Walk the same links (from the same start entry pi uses) first.
export function assertPathTerminates(sm) {
	const entries = sm.getEntries();
	const leafId = sm.getLeafId();
	// getBranch() starts at the leaf; buildSessionContext() falls back to the
	// last entry in the file when the leaf id is undefined (an id-less last line).
	const starts = [leafId ? sm.getEntry(leafId) : undefined];
	if (leafId !== null) starts.push((leafId ? sm.getEntry(leafId) : undefined) ?? entries[entries.length - 1]);
	for (const start of starts) {
		const seen = new Set();
		let current = start;
		while (current) {
			if (seen.has(current)) {
				throw new OracleError(`parent cycle through ${JSON.stringify(current.id)}: pi's path walk would loop forever`, 4);
			}
			seen.add(current);
			current = current.parentId ? sm.getEntry(current.parentId) : undefined;
		}
	}
}

// pi's reading at the session manager's current leaf.
export function inspect(sm, version) {
	assertPathTerminates(sm);
	const header = sm.getHeader();

	// Pre-order, depth-first over getTree(): roots in order, children in the
	// order pi sorted them (by timestamp). Iterative: an explicit stack.
	const tree = [];
	const stack = [...sm.getTree()].reverse();
	while (stack.length > 0) {
		const node = stack.pop();
		const entry = node.entry;
		tree.push({
			id: entry?.id ?? null,
			parentId: entry?.parentId ?? null,
			type: entry?.type ?? null,
			label: node.label ?? null,
			children: node.children.map((child) => child.entry?.id ?? null),
		});
		for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
	}

	return {
		sessionId: header.id,
		version,
		cwd: header.cwd ?? null,
		parentSession: header.parentSession ?? null,
		name: sm.getSessionName() ?? null,
		leafId: sm.getLeafId() ?? null,
		entryCount: sm.getEntryCount(),
		tree,
		path: sm.getBranch().map((entry) => entry?.id ?? null),
		context: sm.buildSessionContext(),
	};
}


// A theme without colors: every style returns its text unchanged.
const plain = (_color, s) => s;

/**
 * Import pi's SessionManager and /tree component from the package folder pkg,
 * with a theme that adds no colors (set before the component is imported).
 */
export async function loadTreeView(pkg) {
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
	return { SessionManager, TreeSelectorComponent };
}

/**
 * Render pi's /tree list of sm as `piweb tree` prints it, for a job
 * {leaf?, filter?, search?, fold?: [ids], copy?}. With copy: the JSON of what
 * ctrl+x copies for each entry (null for nothing), in file order. onList(list)
 * may change pi's TreeList before it filters and renders (pidiff.mjs applies
 * deliberate differences there).
 */
export function renderTree(view, sm, job, onList) {
	if (job.leaf) sm.branch(job.leaf);
	const tree = sm.getTree();
	const leafId = sm.getLeafId();
	const height = 2 * (sm.getEntries().length + 10);
	const selector = new view.TreeSelectorComponent(tree, leafId, height, () => {}, () => {}, () => {}, undefined, job.filter || "default");
	const list = selector.getTreeList();
	onList?.(list);
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
}
