#!/usr/bin/env node
// compile.js times, in fresh processes' worth of steps, what a service pays
// once: compiling the WebAssembly module, starting it, and compiling a spec.
// node bench/compile.js [-count N]
import { readFileSync } from 'node:fs'
import { WASI } from 'node:wasi'
import { compile } from '../index.js'

const args = process.argv.slice(2)
const i = args.indexOf('-count')
const count = i < 0 ? 5 : Number(args[i + 1])
const bytes = readFileSync(new URL('../idemprint.wasm', import.meta.url))
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6
for (let r = 0; r < count; r++) {
  let t0 = process.hrtime.bigint()
  const mod = await WebAssembly.compile(bytes)
  const compileMs = ms(t0)
  t0 = process.hrtime.bigint()
  const wasi = new WASI({ version: 'preview1', returnOnExit: true })
  const inst = new WebAssembly.Instance(mod, wasi.getImportObject())
  wasi.initialize(inst)
  const startMs = ms(t0)
  await compile({})
  t0 = process.hrtime.bigint()
  const n = 1000
  for (let k = 0; k < n; k++) await compile({ intent: ['amountCents', 'currency', 'destination.iban', 'reference', 'debtor.id'], ignore: ['traceId'], headers: ['X-Account'], required: ['amountCents'] })
  const specUs = ms(t0) * 1e3 / n
  console.log(`round ${r}: WebAssembly.compile ${compileMs.toFixed(1)} ms, instantiate and _initialize ${startMs.toFixed(1)} ms, compile(spec) ${specUs.toFixed(1)} µs`)
}
