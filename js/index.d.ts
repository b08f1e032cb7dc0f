/**
 * The spec of a fingerprint: the members of a policy file's "fingerprint"
 * object (docs/fingerprint-v1.md). Every member is optional; {} counts the
 * method, the path and the whole body, with exact numbers.
 */
export interface Spec {
  /** Body paths that count; empty: the whole body, less ignore. */
  intent?: string[]
  /** One segment ("traceId"): that member at every depth; several ("meta.sentAt"): that path from the root. */
  ignore?: string[]
  /** Paths that must be present (with intent, each one of the intent paths). */
  required?: string[]
  /** "exact" (the default: numbers never round) or "jcs" (RFC 8785 doubles). */
  numbers?: 'exact' | 'jcs'
  /** Request headers that identify the operation; names are case-insensitive. */
  headers?: string[]
  /** Query parameters that identify the operation. */
  query?: string[]
}

/** A request, in the shape of the published vectors. */
export interface Request {
  /** The method; '' or absent means GET. */
  method?: string
  /** The concrete, escaped request path, such as /v1/accounts/acc_1/transfers. */
  path?: string
  /** Header values by name; only the names the spec declares count. */
  headers?: Record<string, string | readonly string[]>
  /** Query values by name; only the names the spec declares count. */
  query?: Record<string, string | readonly string[]>
  /** The JSON body: its text, or its bytes. Empty or absent: no body. */
  body?: string | Uint8Array | null
}

/** The classes of RequestError, as docs/fingerprint-v1.md names them. */
export type RequestErrorClass =
  | 'syntax' | 'duplicate-name' | 'invalid-utf8' | 'lone-surrogate'
  | 'number-range' | 'depth' | 'size'
  | 'missing-required' | 'invalid-request'

/** A spec that compile rejects. */
export class SpecError extends Error {
  readonly name: 'SpecError'
  readonly class: 'invalid-spec' | 'invalid-path'
  /** The JSON Pointer of the spec member at fault, such as '/intent/2'. */
  readonly field: string
}

/** A request that has no fingerprint. */
export class RequestError extends Error {
  readonly name: 'RequestError'
  readonly class: RequestErrorClass
  /** Body errors: the byte offset in the body (its UTF-8, for a string). */
  readonly offset?: number
  /** Body errors: the JSON Pointer of the value; '' is the whole body. */
  readonly pointer?: string
  /** missing-required and invalid-request: 'body', 'header', 'query', 'method' or 'path'. */
  readonly part?: string
  /** missing-required and invalid-request: the body path, header or parameter (the vectors' "name"). */
  readonly field?: string
}

/**
 * Fingerprints for one compiled spec. Create one with compile and use it
 * for every request; its memory in the module is released when it is
 * garbage-collected.
 */
export class Fingerprinter {
  private constructor ()
  /** "sha256:" and the digest of the normalized spec. */
  readonly specDigest: string
  /** The fingerprint, 'v1:sha256:' and 43 base64url characters; throws a RequestError. */
  sum (request: Request): string
  /** The canonical intent document that sum hashes; throws a RequestError. */
  intent (request: Request): string
}

/** Checks spec and returns its Fingerprinter; rejects with a SpecError naming the field. */
export function compile (spec?: Spec): Promise<Fingerprinter>
