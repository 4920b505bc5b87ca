#!/usr/bin/env node
// oracle.mjs FILE [--leaf ID | --all-leaves]
//
// Prints how pi's own SessionManager (@earendil-works/pi-coding-agent, pinned in
// package.json) reads a session file, as JSON on stdout. piweb's Go tests compare
// their own reading against this.
//
// pi rewrites v1/v2 files when it migrates them and appends "\n" to a file whose
// last line lacks one, so we always open a COPY in a fresh temp dir: the given
// file is only ever read.
//
// Exit codes: 0 ok; 2 usage or I/O error (message on stderr);
// 3 not a valid pi session ({"error": ...} on stdout);
// 4 a parent cycle on which pi would loop forever ({"error": ...} on stdout).

import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { installSeededRandom } from "./determinism.mjs";
import { assertTreeTerminates, inspect, OracleError, writtenVersion } from "./reading.mjs";

// pi gives v1 entries random ids when it migrates them; seed its randomness so
// the oracle prints the same ids on every run.
installSeededRandom("oracle");

// The package "exports" map only exposes "." (which needs Node 22), so import the
// session manager by file path.
const { SessionManager } = await import(
	"./node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js"
);

function usage(message) {
	throw new OracleError(`${message}\nusage: node oracle.mjs FILE [--leaf ID | --all-leaves]`, 2);
}

function parseArgs(argv) {
	const opts = { file: undefined, leaf: undefined, allLeaves: false };
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (arg === "--leaf") {
			if (i + 1 >= argv.length) usage("--leaf needs an entry id");
			opts.leaf = argv[++i];
		} else if (arg === "--all-leaves") {
			opts.allLeaves = true;
		} else if (arg.startsWith("--")) {
			usage(`unknown option ${arg}`);
		} else if (opts.file === undefined) {
			opts.file = arg;
		} else {
			usage(`unexpected argument ${arg}`);
		}
	}
	if (opts.file === undefined) usage("missing FILE");
	if (opts.leaf !== undefined && opts.allLeaves) usage("--leaf and --all-leaves are exclusive");
	return opts;
}

function run(opts) {
	let text;
	let size;
	try {
		size = statSync(opts.file).size;
		text = readFileSync(opts.file, "utf8");
	} catch (error) {
		throw new OracleError(`cannot read ${opts.file}: ${error.message}`, 2);
	}
	// pi turns an empty (0-byte) file into a brand-new session with a random id:
	// that is not a reading of the file.
	if (size === 0) throw new OracleError("empty file: pi would write a new session header into it", 3);
	const version = writtenVersion(text);

	const dir = mkdtempSync(join(tmpdir(), "pi-oracle-"));
	try {
		const copy = join(dir, basename(opts.file));
		copyFileSync(opts.file, copy);
		let sm;
		try {
			sm = SessionManager.open(copy);
		} catch (error) {
			// Name the user's file, not our temp copy.
			throw new OracleError(error.message.replaceAll(copy, opts.file), 3);
		}
		assertTreeTerminates(sm.getEntries());

		if (opts.allLeaves) {
			// Default leaf first: once branch() has moved the leaf there is no way back.
			// A prototype-less object, so ids like "__proto__" are plain keys.
			const out = Object.create(null);
			out[""] = inspect(sm, version);
			for (const entry of sm.getEntries()) {
				const id = entry?.id;
				if (typeof id !== "string" || Object.hasOwn(out, id)) continue;
				sm.branch(id);
				out[id] = inspect(sm, version);
			}
			return out;
		}
		if (opts.leaf !== undefined) {
			try {
				sm.branch(opts.leaf);
			} catch (error) {
				throw new OracleError(error.message, 2);
			}
		}
		return inspect(sm, version);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

try {
	const result = run(parseArgs(process.argv.slice(2)));
	process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} catch (error) {
	if (!(error instanceof OracleError)) throw error;
	if (error.exitCode === 2) {
		process.stderr.write(`oracle: ${error.message}\n`);
	} else {
		process.stdout.write(`${JSON.stringify({ error: error.message })}\n`);
	}
	process.exitCode = error.exitCode;
}
