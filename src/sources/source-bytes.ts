import { pipeline, Readable } from 'node:stream'
import { TextDecoder } from 'node:util'
import { createGunzip } from 'node:zlib'
import { SourceFormatError } from './source-types.js'

/**
 * The body's bytes, gunzipped as a stream when they start with gzip's magic bytes (1f 8b). The
 * content decides, not the file name or the Content-Type: feed servers label `.csv.gz` as text/csv,
 * or send a plain file named `.gz`. No other format of a catalog starts with those two bytes.
 */
export async function* decompressed(body: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const chunks = body[Symbol.asyncIterator]()
  let head: Buffer = Buffer.alloc(0)
  let ended = false
  // A first chunk of one byte cannot tell; the second decides.
  while (head.length < 2 && !ended) {
    const next = await chunks.next()
    if (next.done) ended = true
    else head = head.length === 0 ? next.value : Buffer.concat([head, next.value])
  }
  const bytes = rejoined(head, ended ? undefined : chunks)
  if (head[0] === 0x1f && head[1] === 0x8b) yield* gunzipped(bytes)
  else yield* bytes
}

/** The chunks read ahead, then the rest of the body; stopping early returns the body's iterator. */
async function* rejoined(head: Buffer, rest: AsyncIterator<Buffer> | undefined): AsyncGenerator<Buffer> {
  if (head.length > 0) yield head
  if (rest !== undefined) yield* { [Symbol.asyncIterator]: () => rest }
}

async function* gunzipped(compressed: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const gunzip = createGunzip()
  // An error on either side destroys the other and ends the loop below, which reports it.
  pipeline(Readable.from(compressed), gunzip, () => undefined)
  try {
    for await (const chunk of gunzip) yield chunk as Buffer
  } catch (error) {
    if (isZlibError(error)) throw new SourceFormatError(`the file starts as gzip but cannot be decompressed: ${(error as Error).message}`)
    throw error
  }
}

function isZlibError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return typeof code === 'string' && code.startsWith('Z_')
}

// Enough bytes for an XML declaration, whatever its attributes.
const SNIFF_BYTES = 512

/**
 * The bytes as text, decoded across chunk boundaries (a character split between two chunks stays
 * whole) with a byte order mark dropped. `encodingOf` names the encoding from the first bytes (XML
 * declares its own); invalid bytes become U+FFFD rather than failing the file.
 */
export async function* decodedText(bytes: AsyncIterable<Buffer>, encodingOf: (head: Buffer) => string = () => 'utf-8'): AsyncGenerator<string> {
  let decoder: TextDecoder | undefined
  let head: Buffer[] = []
  let headBytes = 0
  for await (const chunk of bytes) {
    if (decoder !== undefined) {
      const text = decoder.decode(chunk, { stream: true })
      if (text !== '') yield text
      continue
    }
    head.push(chunk)
    headBytes += chunk.length
    if (headBytes < SNIFF_BYTES) continue
    const first = Buffer.concat(head)
    head = []
    decoder = textDecoder(encodingOf(first))
    yield decoder.decode(first, { stream: true })
  }
  if (decoder === undefined) {
    const first = Buffer.concat(head)
    decoder = textDecoder(encodingOf(first))
    yield decoder.decode(first, { stream: true })
  }
  const last = decoder.decode()
  if (last !== '') yield last
}

function textDecoder(encoding: string): TextDecoder {
  try {
    return new TextDecoder(encoding)
  } catch {
    throw new SourceFormatError(`the file declares the encoding "${encoding.slice(0, 40)}", which is not supported`)
  }
}
