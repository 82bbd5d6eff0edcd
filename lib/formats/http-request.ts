import { createRequire } from 'node:module'
import type CapnpTs from 'capnp-ts'
import {
  HTTP_REQUEST_CACHE_STATUS_NAMES,
  HTTP_REQUEST_DATA_BYTES,
  HTTP_REQUEST_ID,
  HTTP_REQUEST_METHOD_NAMES,
  HTTP_REQUEST_POINTERS,
  HTTP_REQUEST_SCHEMA,
  HTTP_REQUEST_SCHEME_NAMES,
  HTTP_REQUEST_TLS_VERSION_NAMES,
  emptyHttpRequest,
  type HttpRequestCacheStatus,
  type HttpRequestFields,
  type HttpRequestMethod,
  type HttpRequestScheme,
  type HttpRequestTlsVersion
} from './http-request.generated.js'
import { enumName } from './capnp-wire.js'

/**
 * The HttpRequest record of http-request.capnp. Its layout, field type, fast reader and writers are generated from
 * the schema (http-request.generated.ts, by tools/capnp-gen.ts); this module adds the names the rest of squeeze
 * uses and the capnp-ts reference writer and reader the tests hold the generated code to.
 */
export {
  HTTP_REQUEST_DATA_BYTES,
  HTTP_REQUEST_FIELD_COUNT,
  HTTP_REQUEST_POINTERS,
  HTTP_REQUEST_SCHEMA,
  emptyHttpRequest,
  type HttpRequestFields
} from './http-request.generated.js'
export { enumName } from './capnp-wire.js'

/** Enumerant names in ordinal order; the index is the wire value. */
export const HTTP_METHODS = HTTP_REQUEST_METHOD_NAMES
export const SCHEMES = HTTP_REQUEST_SCHEME_NAMES
export const CACHE_STATUSES = HTTP_REQUEST_CACHE_STATUS_NAMES
export const TLS_VERSIONS = HTTP_REQUEST_TLS_VERSION_NAMES

export type HttpMethod = HttpRequestMethod
export type Scheme = HttpRequestScheme
export type CacheStatus = HttpRequestCacheStatus
export type TlsVersion = HttpRequestTlsVersion

/** One field of the schema table. */
export type HttpRequestField = (typeof HTTP_REQUEST_SCHEMA)[number]

/** Maps a request-line method to the enum; unlisted methods become OTHER rather than failing the line. */
export function methodFromString(method: string): HttpMethod {
  const i = (HTTP_METHODS as readonly string[]).indexOf(method)
  return i > 0 && i < HTTP_METHODS.length - 1 ? (HTTP_METHODS[i] as HttpMethod) : 'OTHER'
}

function ordinal(names: readonly string[], value: string): number {
  const i = names.indexOf(value)
  return i < 0 ? 0 : i
}

type Capnp = typeof CapnpTs

interface Reference {
  readonly capnp: Capnp
  readonly HttpRequest: ReturnType<typeof httpRequestStruct>
}

function httpRequestStruct(capnp: Capnp) {
  return class HttpRequest extends capnp.Struct {
    static override readonly _capnp = {
      displayName: 'HttpRequest',
      id: HTTP_REQUEST_ID,
      size: new capnp.ObjectSize(HTTP_REQUEST_DATA_BYTES, HTTP_REQUEST_POINTERS)
    }

    override toString(): string {
      return 'HttpRequest_' + super.toString()
    }
  }
}

let reference: Reference | undefined

/**
 * capnp-ts and the struct class, loaded the first time the reference writer or reader runs: the services
 * never write through it and read through it only for messages the fast reader does not handle, and its
 * sixty-odd modules were a tenth of every command's start-up.
 */
function capnpTs(): Reference {
  if (reference === undefined) {
    const capnp = createRequire(import.meta.url)('capnp-ts') as Capnp
    reference = { capnp, HttpRequest: httpRequestStruct(capnp) }
  }
  return reference
}

/**
 * Reference writer through capnp-ts, far slower than writeHttpRequest (http-request-writer.ts), which the
 * tests hold byte-identical to this one.
 */
export function writeHttpRequestViaCapnpTs(f: HttpRequestFields): Buffer {
  const { capnp, HttpRequest } = capnpTs()
  const message = new capnp.Message()
  const r = message.initRoot(HttpRequest)
  const values = f as unknown as Record<string, string | number | bigint>
  for (const field of HTTP_REQUEST_SCHEMA) {
    const value = values[field.name]
    switch (field.kind) {
      // Empty strings stay null pointers: smaller records, and readers treat null Text as "".
      case 'text':
        if ((value as string).length > 0) capnp.Struct.setText(field.at, value as string, r)
        break
      case 'u16':
        capnp.Struct.setUint16(field.at, value as number, r)
        break
      case 'u32':
        capnp.Struct.setUint32(field.at, value as number, r)
        break
      case 'u64':
        capnp.Struct.setUint64(field.at, value as bigint, r)
        break
      case 'f32':
        capnp.Struct.setFloat32(field.at, value as number, r)
        break
      case 'enum':
        capnp.Struct.setUint16(field.at, ordinal(field.names, value as string), r)
        break
    }
  }
  return Buffer.from(message.toArrayBuffer())
}

/**
 * Reference reader through capnp-ts. Slow (~20k records/s) but independent of the hand-rolled
 * fast reader, so tests cross-check the two. Callers must catch: capnp-ts throws plain Errors.
 */
export function readHttpRequestViaCapnpTs(value: Uint8Array): HttpRequestFields {
  const { capnp, HttpRequest } = capnpTs()
  const r = new capnp.Message(value, false).getRoot(HttpRequest)
  const fields = emptyHttpRequest()
  const values = fields as unknown as Record<string, string | number | bigint>
  for (const field of HTTP_REQUEST_SCHEMA) {
    switch (field.kind) {
      case 'text':
        values[field.name] = capnp.Struct.getText(field.at, r)
        break
      case 'u16':
        values[field.name] = capnp.Struct.getUint16(field.at, r)
        break
      case 'u32':
        values[field.name] = capnp.Struct.getUint32(field.at, r)
        break
      case 'u64':
        values[field.name] = capnp.Struct.getUint64(field.at, r)
        break
      case 'f32':
        values[field.name] = capnp.Struct.getFloat32(field.at, r)
        break
      case 'enum':
        values[field.name] = enumName(field.names, capnp.Struct.getUint16(field.at, r))
        break
    }
  }
  return fields
}
