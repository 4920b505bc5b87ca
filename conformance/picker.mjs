// picker.mjs PKG: whether pi's session picker finds each query in each
// text. Reads {"queries": [...], "texts": [...]} on stdin; prints one JSON
// array with, for each query, {"error": message} or {"found": [a boolean
// per text]}: pi's matchSession(session, parseSearchQuery(query)) on a
// session whose messages are the text (no name, id or cwd to match).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const pkg = process.argv[2];
const { parseSearchQuery, matchSession } = await import(
	pathToFileURL(join(pkg, "dist", "modes", "interactive", "components", "session-selector-search.js")).href
);
const { queries, texts } = JSON.parse(readFileSync(0, "utf8"));
const out = queries.map((query) => {
	const q = parseSearchQuery(query);
	if (q.error) return { error: q.error };
	return { found: texts.map((t) => matchSession({ id: "", cwd: "", allMessagesText: t }, q).matches) };
});
process.stdout.write(JSON.stringify(out));
