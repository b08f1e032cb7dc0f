#!/usr/bin/env node
// sum.js times the package on the Sum cases of the benchmark corpus
// (bench/testdata/corpus, the intent paths of bench/corpus.go) against what
// a Node service writes by hand: SHA-256 over JSON.stringify of a
// deep-sorted JSON.parse. It prints Go benchmark lines, so benchstat reads
// them beside the Go benchmarks: node bench/sum.js [-count N] [-benchtime S].
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { compile } from '../index.js'

const args = process.argv.slice(2)
const opt = (name, def) => { const i = args.indexOf(name); return i < 0 ? def : Number(args[i + 1]) }
const count = opt('-count', 1)
const benchtime = opt('-benchtime', 1) * 1e9

const payment = ['amountCents', 'currency', 'destination.iban', 'reference', 'debtor.id']
const order = ['amountCents', 'currency', 'customer.id', 'items.#.sku', 'items.#.qty']
const irregular = ['amountCents', 'currency', 'customer.id', 'items.#.sku', 'promotions']
const cases = [
  ['payment_small', payment], ['order_medium', order], ['order_large', order],
  ['order_irregular_medium', irregular], ['order_irregular_large', irregular]
]
const corpus = new URL('../../bench/testdata/corpus/', import.meta.url)

function sorted (v) {
  if (Array.isArray(v)) return v.map(sorted)
  if (v === null || typeof v !== 'object') return v
  const out = {}
  for (const k of Object.keys(v).sort()) out[k] = sorted(v[k])
  return out
}

/** bench runs fn for about benchtime and returns ns per call. */
function bench (fn) {
  let n = 1
  for (;;) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < n; i++) fn()
    const ns = Number(process.hrtime.bigint() - t0)
    if (ns >= benchtime || n >= 1e8) return [n, ns / n]
    n = Math.max(n + 1, Math.min(100 * n, Math.ceil(1.2 * n * benchtime / Math.max(ns, 1))))
  }
}

const t0 = process.hrtime.bigint()
const first = await compile({})
const moduleMs = Number(process.hrtime.bigint() - t0) / 1e6
void first
const peers = []
for (const [name, intent] of cases) {
  const body = readFileSync(new URL(name + '.json', corpus), 'utf8')
  const f = await compile({ intent })
  const req = { method: 'POST', path: '/v1/payments', headers: {}, query: {}, body }
  f.sum(req)
  peers.push([name, Buffer.byteLength(body), {
    npm: () => f.sum(req),
    'sha256-sorted-stringify': () => createHash('sha256').update(JSON.stringify(sorted(JSON.parse(body)))).digest('base64url')
  }])
}
console.log(`goos: ${process.platform}\ngoarch: ${process.arch}\npkg: @idemprint/fingerprint\n# node ${process.version}; first compile (module and spec) ${moduleMs.toFixed(1)} ms`)
for (let r = 0; r < count; r++) {
  for (const [name, size, impls] of peers) {
    for (const [impl, fn] of Object.entries(impls)) {
      const [n, ns] = bench(fn)
      console.log(`BenchmarkNodeSum/${name}/${impl}\t${n}\t${ns.toFixed(1)} ns/op\t${(size / ns * 1e3).toFixed(2)} MB/s`)
    }
  }
}
