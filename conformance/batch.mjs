#!/usr/bin/env node
// batch.mjs < files.json
//
// pi's reading of many session files in one process, for the randomised
// differential test: reads a JSON array of file paths on stdin and writes a
// JSON array with, per file, either {"error", "exit"} (what oracle.mjs would
// print and exit with) or {"leaves": {ID: TEXT}}: TEXT is exactly what
// `node oracle.mjs FILE --leaf ID` prints (its JSON text, so escapes such as
// a lone surrogate's "\ud83d" survive), for "" (pi's own leaf) and every id.

import { OracleError, run } from "./reading.mjs";

const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const files = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const out = files.map((file) => {
	try {
		const all = run({ file, allLeaves: true });
		const leaves = Object.create(null);
		for (const id of Object.keys(all)) leaves[id] = `${JSON.stringify(all[id], null, 2)}\n`;
		return { leaves };
	} catch (error) {
		if (!(error instanceof OracleError)) return { error: String(error?.stack ?? error), exit: 1 };
		return { error: error.message, exit: error.exitCode };
	}
});
process.stdout.write(JSON.stringify(out));
