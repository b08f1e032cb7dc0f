// Generates es6numbers.txt.gz: IEEE 754 doubles and their ECMAScript
// Number::toString rendering, the reference for canonical's JCS number
// formatting (RFC 8785 §3.2.2.3). Output is deterministic for a given
// Node.js version; only the rendering comes from the engine.
//
// Regenerate (from the repository root):
//
//	node canonical/testdata/gen-es6numbers.mjs canonical/testdata/es6numbers.txt.gz
//
// Each line is 16 lowercase hex digits (the IEEE 754 bits), one space, and
// String(x). NaN and Infinity never appear. Lines are unique by bits.

import { writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const out = process.argv[2];
if (!out) {
  console.error('usage: node gen-es6numbers.mjs OUTPUT.txt.gz');
  process.exit(2);
}

const MASK64 = (1n << 64n) - 1n;
const SIGN = 1n << 63n;
const EXP_MASK = 0x7ffn << 52n;
const FRAC_MASK = (1n << 52n) - 1n;

// splitmix64 with a fixed seed: the vector set never changes between runs.
let state = 0x1d8e4e27c47d124fn;
function next64() {
  state = (state + 0x9e3779b97f4a7c15n) & MASK64;
  let z = state;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return z ^ (z >> 31n);
}
function below(n) { // uniform-enough integer in [0, n) for small n
  return Number(next64() % BigInt(n));
}

const view = new DataView(new ArrayBuffer(8));
function fromBits(b) { view.setBigUint64(0, b); return view.getFloat64(0); }
function toBits(x) { view.setFloat64(0, x); return view.getBigUint64(0); }

const seen = new Set();
const lines = [];
function addBits(b) {
  b &= MASK64;
  if ((b & EXP_MASK) === EXP_MASK) return; // NaN or Infinity
  if (seen.has(b)) return;
  seen.add(b);
  lines.push(b.toString(16).padStart(16, '0') + ' ' + String(fromBits(b)));
}
function addBoth(b) { addBits(b & ~SIGN); addBits(b | SIGN); }
function add(x) { addBoth(toBits(x)); }
// Neighbours by magnitude of a non-negative finite double's bits.
function addAround(b, k = 1) {
  b &= ~SIGN;
  for (let d = -k; d <= k; d++) {
    const n = b + BigInt(d);
    if (n >= 0n && n < EXP_MASK) addBoth(n);
  }
}

// Boundaries.
addAround(0n, 2);                          // 0, 5e-324 (min subnormal), next
addAround(FRAC_MASK, 2);                   // largest subnormal, smallest normal
addAround(toBits(2 ** 53 - 1), 2);         // 2^53-1, 2^53 (= nearest to 2^53+1), 2^53+2
add(Number('9007199254740993'));           // 2^53+1 as the nearest double
addAround(toBits(1e21), 3);                // the fixed/exponent switch
addAround(toBits(1e-7), 3);
addAround(toBits(1e-6), 3);
addAround(toBits(Number.MAX_VALUE), 3);    // largest double (and below)
addAround(toBits(Number.MIN_VALUE), 3);
addAround(toBits(Number.EPSILON), 2);
addAround(toBits(1), 3);
addAround(toBits(0.1), 3);
for (let k = -323; k <= 308; k++) addAround(toBits(Number('1e' + k)), 1);
for (let k = -1074; k <= 1023; k++) addAround(toBits(2 ** k), 1);
for (let i = 0; i <= 1000; i++) add(i);
// Integers near the powers of ten where fixed notation ends (n = 21).
for (let k = 15; k <= 23; k++) {
  for (let j = 0; j < 50; j++) add(Number('9'.repeat(k - j % 3) + '0'.repeat(j % 3)) + j);
}
// Short decimals with the point everywhere around -6 < n <= 21.
for (let n = -10; n <= 25; n++) {
  for (const d of ['1', '5', '12', '123', '999', '1000001', '123456789012345', '1234567890123456', '12345678901234567']) {
    add(Number('0.' + d + 'e' + n));
  }
}

// Random 64-bit patterns.
for (let i = 0; i < 40000; i++) addBits(next64());
// Random subnormals.
for (let i = 0; i < 8000; i++) addBits((next64() & (FRAC_MASK | SIGN)));
// Every biased exponent 1..2046 with random fractions; short fractions too,
// since a fraction with few set bits gives short or tie-prone digit strings.
for (let e = 1n; e <= 2046n; e++) {
  for (let i = 0; i < 18; i++) addBits((next64() & (FRAC_MASK | SIGN)) | (e << 52n));
  for (let i = 0; i < 3; i++) {
    const f = (next64() & FRAC_MASK) & ~((1n << BigInt(20 + below(33))) - 1n);
    addBits((next64() & SIGN) | (e << 52n) | f);
  }
}
// Random short decimals (1 to 17 digits) over the whole exponent range: the
// shortest rendering is then the literal's own digits.
for (let i = 0; i < 12000; i++) {
  const k = 1 + below(17);
  let d = String(1 + below(9));
  for (let j = 1; j < k; j++) d += String(below(10));
  const x = Number((below(2) ? '-' : '') + '0.' + d + 'e' + (below(650) - 330));
  if (Number.isFinite(x)) addBits(toBits(x));
}
// Random integers up to 2^64, around where digits run out.
for (let i = 0; i < 5000; i++) {
  const x = Number(next64() >> BigInt(below(40)));
  addBits(toBits(below(2) ? -x : x));
}

writeFileSync(out, gzipSync(lines.join('\n') + '\n', { level: 9 }));
console.error(`${lines.length} vectors written to ${out}`);
