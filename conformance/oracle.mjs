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

import { OracleError, run } from "./reading.mjs";

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
