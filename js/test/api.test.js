import { test } from 'node:test'
import assert from 'node:assert/strict'
import v8 from 'node:v8'
import vm from 'node:vm'
import { compile, Fingerprinter, SpecError, RequestError } from '../index.js'

const payment = '{"amountCents":1000,"currency":"EUR","traceId":"t-1"}'
const req = (body, extra = {}) => ({ method: 'POST', path: '/v1/payments', headers: {}, query: {}, body, ...extra })

test('the example of the README', async () => {
  const f = await compile({ intent: ['amountCents', 'currency'], ignore: ['traceId'] })
  assert.ok(f instanceof Fingerprinter)
  assert.match(f.specDigest, /^sha256:[A-Za-z0-9_-]{43}$/)
  const fp = f.sum(req(payment))
  assert.match(fp, /^v1:sha256:[A-Za-z0-9_-]{43}$/)
  assert.equal(f.sum(req('{ "currency":"EUR", "amountCents":1000.0, "traceId":"t-2" }')), fp)
  assert.equal(f.sum(req(new TextEncoder().encode(payment))), fp)
  assert.notEqual(f.sum(req('{"amountCents":1001,"currency":"EUR"}')), fp)
  assert.equal(f.intent(req(payment)),
    '{"absent":{},"headers":{},"intent":{"amountCents":1000,"currency":"EUR"},"method":"POST","path":"/v1/payments","query":{}}')
})

test('spec errors name the field', async () => {
  const cases = [
    [{ intent: ['a', 'b|c'] }, 'invalid-path', '/intent/1'],
    [{ intent: ['a'], required: ['b'] }, 'invalid-spec', '/required/0'],
    [{ numbers: 'float' }, 'invalid-spec', '/numbers'],
    [{ intnet: ['a'] }, 'invalid-spec', '/intnet'],
    [{ intent: 'a' }, 'invalid-spec', '/intent'],
    [{ headers: ['bad header'] }, 'invalid-spec', '/headers/0']
  ]
  for (const [spec, cls, field] of cases) {
    await assert.rejects(compile(spec), (err) => {
      assert.ok(err instanceof SpecError, String(err))
      assert.equal(err.name, 'SpecError')
      assert.deepEqual([err.class, err.field], [cls, field], JSON.stringify(spec))
      assert.match(err.message, /^fingerprint: spec /)
      return true
    })
  }
  await assert.rejects(compile(null), TypeError)
  await assert.rejects(compile([]), TypeError)
})

test('request errors carry class, offset and pointer', async () => {
  const f = await compile({ intent: ['a'], required: ['a'], headers: ['X-Account'] })
  const cases = [
    ['{"a":1,"a":2}', { class: 'duplicate-name', offset: 7, pointer: '/a' }],
    ['{"a":[1,}', { class: 'syntax', offset: 8, pointer: '/a/1' }],
    ['{"a":"\\ud800"}', { class: 'lone-surrogate', offset: 6, pointer: '/a' }],
    [new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), { class: 'invalid-utf8', offset: 6, pointer: '/a' }],
    ['{"a":1e999999999999}', { class: 'number-range', offset: 5, pointer: '/a' }],
    ['[' .repeat(20000), { class: 'depth', offset: 10000, pointer: '/0'.repeat(10000) }]
  ]
  for (const [body, want] of cases) {
    assert.throws(() => f.sum(req(body)), (err) => {
      assert.ok(err instanceof RequestError, String(err))
      assert.equal(err.name, 'RequestError')
      assert.deepEqual({ class: err.class, offset: err.offset, pointer: err.pointer }, want)
      return true
    })
  }
  assert.throws(() => f.sum(req('{"b":1}')), (err) =>
    err instanceof RequestError && err.class === 'missing-required' && err.part === 'body' && err.field === 'a')
  assert.throws(() => f.sum(req('{"a":1}', { headers: { 'X-Account': 'a', 'x-account': 'b' } })), (err) =>
    err instanceof RequestError && err.class === 'invalid-request' && err.part === 'header' && err.field === 'x-account')
  // The module goes on after every rejection.
  assert.match(f.sum(req('{"a":1}')), /^v1:sha256:/)
})

test('headers and query values may be strings or arrays', async () => {
  const f = await compile({ headers: ['X-Account'], query: ['dryRun'] })
  assert.equal(f.sum(req('{}', { headers: { 'x-account': 'acc_1' }, query: { dryRun: 'false' } })),
    f.sum(req('{}', { headers: { 'X-Account': ['acc_1'] }, query: { dryRun: ['false'] } })))
  assert.notEqual(f.sum(req('{}', { headers: { 'X-Account': ['acc_1', 'acc_2'] } })),
    f.sum(req('{}', { headers: { 'X-Account': ['acc_2', 'acc_1'] } })))
  assert.throws(() => f.sum(req('{}', { headers: { 'X-Account': 1 } })), TypeError)
  assert.throws(() => f.sum(req(1)), TypeError)
  assert.throws(() => f.sum(null), TypeError)
})

test('a lone surrogate in a string is rejected, not replaced', async () => {
  const f = await compile({ headers: ['X-A'] })
  assert.throws(() => f.sum(req('{}', { headers: { 'X-A': 'a\ud800' } })), (err) =>
    err instanceof RequestError && err.class === 'invalid-request' && err.part === 'header')
  assert.throws(() => f.sum(req('{}', { path: '/\udc00' })), (err) =>
    err instanceof RequestError && err.class === 'invalid-request' && err.part === 'path')
  assert.throws(() => f.sum(req('{"a":"\ud800"}')), (err) =>
    err instanceof RequestError && err.class === 'invalid-utf8' && err.offset === 6)
  assert.equal(f.sum(req('{"a":"\ud83d\ude00"}', { headers: { 'X-A': '\ud83d\ude00' } })),
    f.sum(req(new TextEncoder().encode('{"a":"😀"}'), { headers: { 'X-A': '😀' } })))
})

test('a large body is released after the call', async () => {
  const f = await compile({})
  const big = '[' + '"0123456789abcdef",'.repeat(1 << 18) + '1]' // 5 MiB
  assert.match(f.sum(req(big)), /^v1:sha256:/)
  assert.match(f.sum(req('{}')), /^v1:sha256:/)
})

test('memory stays bounded over 100,000 calls', async () => {
  const f = await compile({ intent: ['amountCents', 'currency'], ignore: ['traceId'] })
  const bodies = [payment, '{"amountCents":1,"amountCents":2}', '{"amountCents":[', new Uint8Array([0xff])]
  const memory = () => process.memoryUsage()
  let wasmAfterWarmup = 0
  let rssAfterWarmup = 0
  for (let i = 0; i < 100_000; i++) {
    const body = i % 2 === 0 ? bodies[0] : bodies[i % bodies.length]
    try { f.sum(req(body)) } catch (err) { if (!(err instanceof RequestError)) throw err }
    if (i === 30_000) {
      wasmAfterWarmup = wasmBytes()
      rssAfterWarmup = memory().rss
    }
  }
  assert.ok(wasmBytes() - wasmAfterWarmup < 8 << 20, `the module's memory grew from ${wasmAfterWarmup} to ${wasmBytes()} bytes after the warm-up`)
  assert.ok(memory().rss - rssAfterWarmup < 64 << 20, 'resident memory grew by more than 64 MiB')
})

test('a Fingerprinter that is collected releases its spec', async () => {
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc')
  const round = async (r) => {
    for (let i = 0; i < 2_000; i++) await compile({ intent: [`r${r}.a${i}`] })
    gc()
    await new Promise((resolve) => setTimeout(resolve, 10)) // let the finalizers run
  }
  // The module's heap grows to its collector's target, then stays there;
  // Go's collector runs only while the module is called, so the target is
  // loose. Six more rounds of specs that were all kept would add 30 MiB.
  let most = 0
  for (let r = 0; r < 6; r++) {
    await round(r)
    most = Math.max(most, wasmBytes())
  }
  for (let r = 6; r < 12; r++) await round(r)
  assert.ok(wasmBytes() - most < 20 << 20, `the module's memory grew from ${most} to ${wasmBytes()} bytes`)
})

/**
 * wasmBytes is V8's external memory, of which the module's linear memory
 * is nearly all: a linear memory never shrinks, so growth after a warm-up
 * is memory some call did not give back.
 */
function wasmBytes () {
  return process.memoryUsage().external
}
