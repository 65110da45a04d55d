import { isUtf8 } from 'node:buffer'
import { pipeline, Readable } from 'node:stream'
import { TextDecoder } from 'node:util'
import { createGunzip } from 'node:zlib'
import { SourceFormatError } from './source-types.js'

/**
 * The body's bytes, gunzipped as a stream when they start with gzip's magic bytes (1f 8b). The
 * content decides, not the file name or the Content-Type: feed servers label `.csv.gz` as text/csv,
 * or send a plain file named `.gz`. No other format of a catalog starts with those two bytes. Twice
 * at most: a `.csv.gz` served with `Content-Encoding: gzip` arrives gzipped twice.
 */
export async function* decompressed(body: AsyncIterable<Buffer>, layers = 2): AsyncGenerator<Buffer> {
  // A first chunk of one byte cannot tell; the second decides.
  const { head, whole } = await readAhead(body, 2)
  if (layers > 0 && head[0] === 0x1f && head[1] === 0x8b) yield* decompressed(gunzipped(whole), layers - 1)
  else yield* whole
}

/**
 * The first `size` bytes of a body or a little more (all of it when it is shorter), to decide how to
 * read it, and the whole body again: those chunks, then the rest as it comes.
 */
async function readAhead(body: AsyncIterable<Buffer>, size: number): Promise<{ head: Buffer; whole: AsyncGenerator<Buffer> }> {
  const chunks = body[Symbol.asyncIterator]()
  const read: Buffer[] = []
  let length = 0
  let ended = false
  while (length < size && !ended) {
    const next = await chunks.next()
    if (next.done) ended = true
    else {
      read.push(next.value)
      length += next.value.length
    }
  }
  const head = read.length === 1 ? read[0]! : Buffer.concat(read)
  return { head, whole: rejoined(head, ended ? undefined : chunks) }
}

/** The chunks read ahead, then the rest of the body; stopping early, even at the first chunk, returns the body's iterator. */
async function* rejoined(head: Buffer, rest: AsyncIterator<Buffer> | undefined): AsyncGenerator<Buffer> {
  try {
    if (head.length > 0) yield head
    if (rest !== undefined) yield* { [Symbol.asyncIterator]: () => rest }
  } finally {
    await rest?.return?.()
  }
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

// Enough bytes for an XML declaration, whatever its attributes, and for a file's first rows: where
// nothing names the encoding, bytes there that are no UTF-8 make it Windows-1252.
const SNIFF_BYTES = 65_536

/**
 * The encoding of a file from its first bytes: a byte order mark; else what the file itself names
 * (an XML declaration, through `named`); else the charset the server declared; else UTF-8. Where the
 * choice is UTF-8 but the first bytes are no UTF-8, they are Windows-1252 (of which ISO-8859-1 is a
 * part): what spreadsheets and older shop systems export, often under a server's default
 * `charset=utf-8`. A real UTF-8 file with a stray byte later keeps UTF-8, the byte a U+FFFD.
 */
export function sniffedEncoding(head: Buffer, { named, declared }: { named?: string; declared?: string } = {}): string {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf-8'
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le'
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be'
  // A server's charset that no decoder knows (`binary`, say) says nothing; a file's own name is kept, and refused by name.
  const chosen = (named ?? (declared !== undefined && knownEncoding(declared) ? declared : 'utf-8')).toLowerCase()
  if ((chosen === 'utf-8' || chosen === 'utf8') && !isUtf8(completeCharacters(head))) return 'windows-1252'
  return chosen
}

function knownEncoding(name: string): boolean {
  try {
    new TextDecoder(name)
    return true
  } catch {
    return false
  }
}

/** The head without a UTF-8 character its end cuts in two (at most three bytes of one). */
function completeCharacters(head: Buffer): Buffer {
  for (let back = 1; back <= Math.min(3, head.length); back++) {
    const byte = head[head.length - back]!
    if (byte < 0x80) return head
    // A lead byte: the character starts here and may go on past the head.
    if (byte >= 0xc0) return head.subarray(0, head.length - back)
  }
  return head
}

/**
 * The bytes as UTF-8, which csv-parse reads: as they are when the file is UTF-8 (most are, and
 * then nothing is copied), otherwise decoded from the encoding sniffedEncoding finds and encoded
 * again. The byte order mark of UTF-16 goes; UTF-8's stays for csv-parse to drop.
 */
export async function* utf8Bytes(bytes: AsyncIterable<Buffer>, declared: string | undefined): AsyncGenerator<Buffer> {
  const { head, whole } = await readAhead(bytes, SNIFF_BYTES)
  const encoding = sniffedEncoding(head, { declared })
  if (encoding === 'utf-8') yield* whole
  else for await (const text of decodedText(whole, () => encoding)) yield Buffer.from(text)
}

/**
 * The bytes as text, decoded across chunk boundaries (a character split between two chunks stays
 * whole) with a byte order mark dropped. `encodingOf` names the encoding from the first bytes (XML
 * declares its own); invalid bytes become U+FFFD rather than failing the file.
 */
export async function* decodedText(bytes: AsyncIterable<Buffer>, encodingOf: (head: Buffer) => string = () => 'utf-8'): AsyncGenerator<string> {
  const { head, whole } = await readAhead(bytes, SNIFF_BYTES)
  const decoder = textDecoder(encodingOf(head))
  for await (const chunk of whole) {
    const text = decoder.decode(chunk, { stream: true })
    if (text !== '') yield text
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
