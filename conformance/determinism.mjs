// Deterministic clock and randomness for pi's SessionManager, so the generated
// files (and the oracle's reading of v1 files, whose ids pi invents) are the same
// on every run. Install BEFORE importing pi.
//
// pi takes entry ids from crypto.randomUUID() (imported by name from "crypto"),
// session ids from uuidv7() (globalThis.crypto.getRandomValues + Date.now()), and
// entry timestamps from `new Date()`.

import crypto, { createHash } from "node:crypto";
import { syncBuiltinESMExports } from "node:module";

// A byte stream from SHA-256 in counter mode over a seed text.
let seedText = "piweb";
let counter = 0;
let pool = Buffer.alloc(0);

function randomBytes(n) {
	while (pool.length < n) {
		const block = createHash("sha256").update(`${seedText}/${counter++}`).digest();
		pool = Buffer.concat([pool, block]);
	}
	const out = pool.subarray(0, n);
	pool = pool.subarray(n);
	return out;
}

/** Restart the random stream from a new seed (e.g. once per scenario). */
export function reseed(text) {
	seedText = text;
	counter = 0;
	pool = Buffer.alloc(0);
}

/** Make crypto.randomUUID() and crypto.getRandomValues() draw from the seeded stream. */
export function installSeededRandom(text = "piweb") {
	reseed(text);
	crypto.randomUUID = () => {
		const b = Buffer.from(randomBytes(16));
		b[6] = (b[6] & 0x0f) | 0x40; // version 4
		b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
		const h = b.toString("hex");
		return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
	};
	// Push the patched function into the live bindings of `import { randomUUID } from "crypto"`.
	syncBuiltinESMExports();
	globalThis.crypto.getRandomValues = (array) => {
		const bytes = randomBytes(array.byteLength);
		new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(bytes);
		return array;
	};
}

export const RealDate = Date;

// A fake clock: every `new Date()` (no arguments) and every Date.now() returns the
// current fake time and then advances it by `step` ms, so successive entries get
// distinct, increasing timestamps. `set` moves it anywhere, backwards included.
export const clock = {
	now: Date.UTC(2025, 0, 1, 9, 0, 0),
	step: 1234,
	/** Read the clock and advance it. */
	tick() {
		const t = this.now;
		this.now += this.step;
		return t;
	},
	/** The next tick returns `ms` (a number or an ISO string). */
	set(ms) {
		this.now = typeof ms === "string" ? RealDate.parse(ms) : ms;
	},
};

/** Replace the global Date with one that reads the fake clock. */
export function installFakeClock() {
	globalThis.Date = class FakeDate extends RealDate {
		constructor(...args) {
			if (args.length === 0) super(clock.tick());
			else super(...args);
		}
		static now() {
			return clock.tick();
		}
	};
}
