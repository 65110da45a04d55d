import { promisify } from 'node:util'
import zlib from 'node:zlib'
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.js'
import { findLoneSurrogate, findNul } from './nul-guard.js'
import { isZlibHeader } from './sniffing-inflate.js'

// JSON request bodies of both interfaces (platform bodies, stream documents; not product uploads,
// which stream through body-source.ts). They are small, so they are read whole: decoded when they
// come compressed, bounded before and after decompression, parsed, and refused when a text holds a
// NUL, which no Postgres text column can store.

/** The largest JSON body, compressed or not, and the most a compressed one may inflate to. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })
const UNSTORABLE_ESCAPE = /\\u(0000|[dD][89a-fA-F])/
const gunzip = promisify(zlib.gunzip)
const inflate = promisify(zlib.inflate)
const inflateRaw = promisify(zlib.inflateRaw)

/** The body's JSON value; `undefined` for an empty body. */
export async function readJsonBody(raw: Buffer, contentEncoding: string | undefined, maxBytes = MAX_JSON_BODY_BYTES): Promise<unknown> {
  const body = await decodeBody(raw, contentEncoding, maxBytes)
  let text: string
  try {
    text = UTF8.decode(body)
  } catch {
    // Decoded leniently, the broken bytes would be stored as U+FFFD without a word.
    throw new BadRequestError('The body is not valid UTF-8 text')
  }
  if (text.trim() === '') return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new BadRequestError(`Malformed JSON body: ${(error as Error).message}`)
  }
  // Only a body that spells \u0000 or a surrogate escape can hold a NUL (JSON allows no raw one) or a
  // lone surrogate (valid UTF-8 encodes none): most bodies are not walked.
  if (UNSTORABLE_ESCAPE.test(text)) {
    const nul = findNul(value)
    if (nul !== undefined) throw new BadRequestError(`${nul || 'body'}: must not contain NUL (\\u0000)`)
    const half = findLoneSurrogate(value)
    if (half !== undefined) throw new BadRequestError(`${half || 'body'}: must not contain a lone UTF-16 surrogate (\\ud800 to \\udfff)`)
  }
  return value
}

/**
 * The body with its Content-Encoding undone. `gzip` and `deflate` are told apart by their first
 * bytes rather than trusted: the official PHP client sends raw deflate labelled `gzip`, and
 * `deflate` is sent both zlib-wrapped (as the standard says) and raw (as many clients do).
 */
async function decodeBody(raw: Buffer, contentEncoding: string | undefined, maxBytes: number): Promise<Buffer> {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity')
  if (codings.length === 0) return raw
  const [coding] = codings
  if (codings.length > 1 || !(coding === 'gzip' || coding === 'x-gzip' || coding === 'deflate')) {
    throw new UnsupportedMediaTypeError(`Content-Encoding ${contentEncoding} is not supported; send gzip, deflate or an uncompressed body`)
  }
  const options = { maxOutputLength: maxBytes }
  try {
    if (raw[0] === 0x1f && raw[1] === 0x8b) return await gunzip(raw, options)
    if (isZlibHeader(raw)) return await inflate(raw, options)
    return await inflateRaw(raw, options)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new PayloadTooLargeError(`The body is larger than ${maxBytes} bytes (after decompression)`)
    }
    throw new BadRequestError(`The body is labelled Content-Encoding: ${coding} but does not decode (${(error as Error).message})`)
  }
}
