// Every published vector (testdata/vectors) through the npm package.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { compile, SpecError, RequestError } from '../index.js'

const dir = new URL('../../testdata/vectors/', import.meta.url)
const vectors = ['positive.jsonl', 'negative.jsonl'].flatMap((file) =>
  readFileSync(new URL(file, dir), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l)))

/** request turns a vector's request into the package's argument. */
export function request (r) {
  const out = { method: r.method, path: r.path, headers: r.headers, query: r.query, body: r.body }
  if (r.bodyBase64 !== undefined) out.body = new Uint8Array(Buffer.from(r.bodyBase64, 'base64'))
  return out
}

test('at least 1000 vectors', () => assert.ok(vectors.length >= 1000, `${vectors.length} vectors`))

test('every vector', async (t) => {
  const compiled = new Map()
  for (const v of vectors) {
    const key = JSON.stringify(v.spec)
    if (!compiled.has(key)) {
      try {
        compiled.set(key, await compile(v.spec))
      } catch (err) {
        compiled.set(key, err)
      }
    }
    const f = compiled.get(key)
    if (v.request === undefined) {
      assert.ok(f instanceof SpecError, `${v.name}: compile did not throw a SpecError: ${f}`)
      assert.deepEqual({ class: f.class, field: f.field }, { class: v.error.class, field: v.error.field }, v.name)
      continue
    }
    assert.ok(!(f instanceof Error), `${v.name}: compile threw ${f}`)
    assert.equal(f.specDigest, v.specDigest, v.name)
    const req = request(v.request)
    if (v.error === undefined) {
      assert.equal(f.sum(req), v.fingerprint, v.name)
      assert.equal(f.intent(req), v.intent, v.name)
      continue
    }
    const err = (() => { try { f.sum(req) } catch (e) { return e } })()
    assert.ok(err instanceof RequestError, `${v.name}: sum did not throw a RequestError: ${err}`)
    const want = { class: v.error.class }
    const got = { class: err.class }
    if ('offset' in v.error) Object.assign(want, { offset: v.error.offset, pointer: v.error.pointer }), Object.assign(got, { offset: err.offset, pointer: err.pointer })
    if ('part' in v.error) Object.assign(want, { part: v.error.part, field: v.error.name }), Object.assign(got, { part: err.part, field: err.field })
    assert.deepEqual(got, want, v.name)
    assert.throws(() => f.intent(req), RequestError, v.name)
  }
})
