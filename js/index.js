// @idemprint/fingerprint: idemprint request fingerprints (format v1) for
// Node.js. The fingerprint code is idemprint's own Go package, compiled to
// a WebAssembly reactor module (idemprint.wasm) and run with node:wasi, so
// a fingerprint computed here equals the one a Go service computes.

import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { WASI } from 'node:wasi'

/** SpecError reports a spec that compile rejects; .field names the member. */
export class SpecError extends Error {
  constructor (e) {
    super(e.message)
    this.name = 'SpecError'
    /** 'invalid-spec' or 'invalid-path' */
    this.class = e.class
    /** the JSON Pointer of the spec member at fault, such as '/intent/2' */
    this.field = e.field
  }
}

/** RequestError reports a request that has no fingerprint. */
export class RequestError extends Error {
  constructor (e) {
    super(e.message)
    this.name = 'RequestError'
    /** the error class of docs/fingerprint-v1.md, such as 'duplicate-name' */
    this.class = e.class
    if (e.offset !== undefined) {
      /** body errors: the byte offset in the body's UTF-8 */
      this.offset = e.offset
      /** body errors: the JSON Pointer of the value ('' is the whole body) */
      this.pointer = e.pointer
    }
    if (e.part !== undefined) {
      /** 'body', 'header', 'query', 'method' or 'path' */
      this.part = e.part
      /** the body path, header or query parameter in question */
      this.field = e.name
    }
  }
}

const BASE = 64 << 10 // the module's buffer is never smaller
const KEEP = 1 << 20 // a larger buffer is released by the next call

const wasmURL = new URL('./idemprint.wasm', import.meta.url)
let wasmModule = null // WebAssembly.Module, compiled once per process
let mod = null // the running instance; replaced if it ever stops
let generation = 0

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** load compiles the WebAssembly module, once. */
async function load () {
  if (wasmModule === null) {
    wasmModule = await WebAssembly.compile(readFileSync(wasmURL))
  }
}

/** instance returns the running instance, starting one if needed. */
function instance () {
  if (mod !== null) return mod
  const wasi = new WASI({ version: 'preview1', args: [], env: {}, returnOnExit: true })
  const inst = new WebAssembly.Instance(wasmModule, wasi.getImportObject())
  wasi.initialize(inst)
  const x = inst.exports
  mod = { x, memory: x.memory, u8: new Uint8Array(x.memory.buffer), ptr: 0, room: 0 }
  generation++
  return mod
}

/** call runs an export; if the module stops (it should not), it is dropped. */
function call (m, fn, ...args) {
  try {
    return fn(...args)
  } catch (err) {
    if (mod === m) mod = null
    throw new Error('@idemprint/fingerprint: the WebAssembly module stopped: ' + err.message, { cause: err })
  }
}

function view (m) {
  if (m.u8.buffer !== m.memory.buffer) m.u8 = new Uint8Array(m.memory.buffer)
  return m.u8
}

/** room makes the input buffer hold n bytes and returns its address. */
function room (m, n) {
  if (n > m.room || m.room > KEEP) {
    m.ptr = call(m, m.x.idemprint_buffer, n)
    m.room = Math.max(n, BASE)
  }
  return m.ptr
}

/** bytes returns the output of a call whose result was r >= 0, in place. */
function bytes (m, r) {
  const ptr = call(m, m.x.idemprint_output)
  return view(m).subarray(ptr, ptr + r)
}

/** output reads the output of a call whose result was r. */
function output (m, r) {
  const text = decoder.decode(bytes(m, r < 0 ? -r : r))
  return r < 0 ? { err: JSON.parse(text) } : { text }
}

/**
 * utf8 writes s at off as UTF-8 and returns the end. A lone surrogate,
 * which UTF-8 cannot hold, is written as its three-byte form (WTF-8): the
 * module rejects it as invalid UTF-8, as Go rejects such a string, instead
 * of fingerprinting U+FFFD in its place.
 */
function utf8 (u8, off, s) {
  if (s.isWellFormed()) return off + encoder.encodeInto(s, u8.subarray(off)).written
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i)
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d < 0xe000) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00)
        i++
      }
    }
    if (c < 0x80) {
      u8[off++] = c
    } else if (c < 0x800) {
      u8[off++] = 0xc0 | (c >> 6); u8[off++] = 0x80 | (c & 63)
    } else if (c < 0x10000) {
      u8[off++] = 0xe0 | (c >> 12); u8[off++] = 0x80 | ((c >> 6) & 63); u8[off++] = 0x80 | (c & 63)
    } else {
      u8[off++] = 0xf0 | (c >> 18); u8[off++] = 0x80 | ((c >> 12) & 63)
      u8[off++] = 0x80 | ((c >> 6) & 63); u8[off++] = 0x80 | (c & 63)
    }
  }
  return off
}

function str (what, v) {
  if (typeof v !== 'string') throw new TypeError(`@idemprint/fingerprint: ${what} must be a string`)
  return v
}

/** fields lists [name, values] of a headers or query object. */
function fields (what, obj) {
  if (obj === undefined || obj === null) return []
  if (typeof obj !== 'object' || Array.isArray(obj)) throw new TypeError(`@idemprint/fingerprint: ${what} must be an object`)
  const out = []
  for (const name of Object.keys(obj)) {
    const v = obj[name]
    if (v === undefined) continue
    const vals = Array.isArray(v) ? v : [v]
    for (const x of vals) str(`${what}[${JSON.stringify(name)}] values`, x)
    out.push([name, vals])
  }
  return out
}

/** frame writes the request frame of req (see internal/fpwire) and returns its length. */
function frame (m, req) {
  if (req === null || typeof req !== 'object') throw new TypeError('@idemprint/fingerprint: the request must be an object')
  const method = req.method === undefined ? '' : str('method', req.method)
  const path = req.path === undefined ? '' : str('path', req.path)
  const headers = fields('headers', req.headers)
  const query = fields('query', req.query)
  const body = req.body ?? ''
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
    throw new TypeError('@idemprint/fingerprint: body must be a string or a Uint8Array')
  }
  // At most 3 bytes of UTF-8 per UTF-16 unit, 4 per length or count.
  let bound = 12 + 3 * (method.length + path.length) + 8 + body.length * (typeof body === 'string' ? 3 : 1)
  for (const list of [headers, query]) {
    for (const [name, vals] of list) {
      bound += 8 + 3 * name.length
      for (const v of vals) bound += 4 + 3 * v.length
    }
  }
  const ptr = room(m, bound)
  const u8 = view(m)
  const dv = new DataView(u8.buffer)
  let off = ptr
  const put = (s) => {
    const end = utf8(u8, off + 4, s)
    dv.setUint32(off, end - off - 4, true)
    off = end
  }
  put(method)
  put(path)
  for (const list of [headers, query]) {
    dv.setUint32(off, list.length, true)
    off += 4
    for (const [name, vals] of list) {
      put(name)
      dv.setUint32(off, vals.length, true)
      off += 4
      for (const v of vals) put(v)
    }
  }
  if (typeof body === 'string') {
    put(body)
  } else {
    dv.setUint32(off, body.length, true)
    u8.set(body, off + 4)
    off += 4 + body.length
  }
  return off - ptr
}

const registry = new FinalizationRegistry(({ gen, handle }) => {
  if (mod !== null && gen === generation) {
    try { mod.x.idemprint_release(handle) } catch {}
  }
})

/**
 * A Fingerprinter computes fingerprints for one compiled spec. Create one
 * with compile; it may be used for any number of requests.
 */
export class Fingerprinter {
  #json
  #prefix // the preimage's first two lines
  #gen = 0
  #handle = 0
  #token = {}

  /** @internal */
  constructor (json, key) {
    if (key !== constructKey) throw new TypeError('@idemprint/fingerprint: use compile()')
    this.#json = json
    this.#bind()
    const m = mod
    const r = call(m, m.x.idemprint_digest, this.#handle)
    /** "sha256:" and the digest of the normalized spec */
    this.specDigest = output(m, r).text
    this.#prefix = 'idemprint/fingerprint/v1\n' + this.specDigest + '\n'
  }

  #bind () {
    const m = instance()
    if (this.#gen === generation) return m
    const ptr = room(m, 3 * this.#json.length)
    const n = encoder.encodeInto(this.#json, view(m).subarray(ptr)).written
    const r = call(m, m.x.idemprint_compile, n)
    if (r < 0) throw new SpecError(output(m, r).err)
    if (this.#gen !== 0) registry.unregister(this.#token)
    this.#gen = generation
    this.#handle = r
    registry.register(this, { gen: generation, handle: r }, this.#token)
    return m
  }

  /** document returns the intent document of req, in the module's memory. */
  #document (req) {
    const m = this.#bind()
    const n = frame(m, req)
    const r = call(m, m.x.idemprint_document, this.#handle, n)
    if (r < 0) throw new RequestError(output(m, r).err)
    return bytes(m, r)
  }

  /**
   * sum returns the fingerprint of req, 'v1:sha256:' and 43 base64url
   * characters: the SHA-256 of "idemprint/fingerprint/v1\n", the spec
   * digest, "\n" and the intent document. It throws a RequestError for a
   * body that is not strict JSON, a missing required value, or a header
   * or query value in two spellings of one name.
   */
  sum (req) {
    const doc = this.#document(req)
    return 'v1:sha256:' + createHash('sha256').update(this.#prefix, 'latin1').update(doc).digest('base64url')
  }

  /** intent returns the canonical intent document that sum hashes. */
  intent (req) { return decoder.decode(this.#document(req)) }
}

const constructKey = Symbol('compile')

/**
 * compile checks a spec and returns a Fingerprinter for it. The spec has
 * the members of a policy file's "fingerprint" object: intent, ignore,
 * required, headers, query (arrays of strings) and numbers ('exact' or
 * 'jcs'). A problem is a SpecError whose .field names the member.
 */
export async function compile (spec = {}) {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) {
    throw new TypeError('@idemprint/fingerprint: the spec must be an object')
  }
  await load()
  const json = JSON.stringify(spec)
  return new Fingerprinter(json, constructKey)
}
