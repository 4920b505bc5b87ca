// regex.mjs PKG: how pi's session picker reads re:PATTERN. Reads
// {"patterns": [...], "texts": [...]} on stdin; prints one JSON array with,
// for each pattern, pi's parseSearchQuery("re:" + pattern) applied to every
// text: {"error": message} or {"matches": [first match in each text, or null]}.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const pkg = process.argv[2];
const { parseSearchQuery } = await import(
	pathToFileURL(join(pkg, "dist", "modes", "interactive", "components", "session-selector-search.js")).href
);
const { patterns, texts } = JSON.parse(readFileSync(0, "utf8"));
const out = patterns.map((p) => {
	const q = parseSearchQuery("re:" + p);
	if (q.error || !q.regex) return { error: q.error ?? "no regex" };
	return {
		matches: texts.map((t) => {
			const m = q.regex.exec(t);
			return m ? m[0] : null;
		}),
	};
});
process.stdout.write(JSON.stringify(out));
