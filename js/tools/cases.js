#!/usr/bin/env node
// cases.js reads lines {"spec": …, "request": …} (a request in the vectors'
// shape) on stdin and writes one result a line on stdout, in the shape of
// `idemprint fingerprint --jsonl`: {"fingerprint": …} or {"error": …}. The
// Go tests run it to check the package against native Go.
import { createInterface } from 'node:readline'
import { compile, SpecError, RequestError } from '../index.js'

const compiled = new Map()
const out = []
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  const { spec, request: r } = JSON.parse(line)
  const key = JSON.stringify(spec)
  if (!compiled.has(key)) compiled.set(key, await compile(spec).catch((err) => err))
  const f = compiled.get(key)
  const req = { method: r.method, path: r.path, headers: r.headers, query: r.query, body: r.body }
  if (r.bodyBase64 !== undefined) req.body = new Uint8Array(Buffer.from(r.bodyBase64, 'base64'))
  try {
    if (f instanceof Error) throw f
    out.push(JSON.stringify({ fingerprint: f.sum(req) }))
  } catch (err) {
    out.push(JSON.stringify({ error: errorObject(err) }))
  }
}
process.stdout.write(out.map((l) => l + '\n').join(''))

/** errorObject writes an error as the line protocol does, members in canonical order. */
function errorObject (err) {
  if (err instanceof SpecError) return { class: err.class, field: err.field, message: err.message }
  if (!(err instanceof RequestError)) throw err
  if (err.part !== undefined) return { class: err.class, message: err.message, name: err.field, part: err.part }
  return { class: err.class, message: err.message, offset: err.offset, pointer: err.pointer }
}
