import path from 'node:path'
import { fingerprint, hostName, port, readLoginCredentials, secretText, text, type ServerLoginInput } from '../input/server-fields.js'
import type { FetchedSourceSettings, SourceCredentials, SourceFileFormat } from '../db/schema.js'
import { BadRequestError } from '../errors.js'

// A fetched source (a feed URL or a file on an SFTP server) as a client writes it, checked
// field by field: every mistake is a 400 naming the field. Credentials are write-only: a source
// saved without them keeps the ones stored for the same server and user (site-sources.ts).

/** The fields of a fetched source besides those every data source has (description, import_type, status, import_empty). */
export interface FetchedSourceInput extends ServerLoginInput {
  url?: unknown
  auth?: unknown
  path?: unknown
  format?: unknown
  delimiter?: unknown
  quote?: unknown
  header?: unknown
  item_element?: unknown
  id_column?: unknown
}

export interface FetchedSource {
  settings: FetchedSourceSettings
  /** Undefined: none given, the stored ones stay (when the login is the same). */
  credentials: SourceCredentials | undefined
}

const FORMATS = ['csv', 'tsv', 'xml', 'ndjson', 'json'] as const
const EXTENSIONS: Record<string, SourceFileFormat['format']> = {
  '.csv': 'csv',
  '.tsv': 'tsv',
  '.tab': 'tsv',
  '.xml': 'xml',
  '.rss': 'xml',
  '.atom': 'xml',
  '.ndjson': 'ndjson',
  '.jsonl': 'ndjson',
  '.json': 'json',
}
// Headers the fetch sets itself: a source's one header is for a key or a token.
const MANAGED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'accept-encoding',
  'if-none-match',
  'if-modified-since',
  'te',
  'upgrade',
])
// Names that are properties of every JavaScript object: as a header they would never be sent.
const NOT_HEADERS = new Set(['__proto__', 'constructor', 'prototype'])
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/
const XML_NAME = /^(?:[A-Za-z_][\w.-]*:)?[A-Za-z_][\w.-]*$/

export function readFetchedSource(kind: 'feed_url' | 'sftp', input: FetchedSourceInput & { stream_id?: unknown }): FetchedSource {
  if (input.stream_id !== undefined && input.stream_id !== null)
    throw new BadRequestError(`stream_id: belongs to a stream source; a ${kind} source fetches its own file`)
  if (kind === 'feed_url') {
    for (const field of ['host', 'port', 'user', 'password', 'private_key', 'passphrase', 'host_key_sha256', 'path'] as const) {
      if (input[field] !== undefined && input[field] !== null)
        throw new BadRequestError(`${field}: belongs to an sftp source; a feed_url source takes url and auth`)
    }
    const url = readUrl(input.url)
    const { auth, credentials } = readAuth(input.auth)
    return { settings: { kind, url, ...auth, ...readFormat(input, new URL(url).pathname) }, credentials }
  }
  if (input.url !== undefined && input.url !== null) throw new BadRequestError('url: belongs to a feed_url source; an sftp source takes host and path')
  if (input.auth !== undefined && input.auth !== null)
    throw new BadRequestError('auth: belongs to a feed_url source; an sftp source takes password or private_key')
  const remotePath = text(input.path, 'path', 1000)
  if (remotePath.endsWith('/')) throw new BadRequestError('path: names a file, not a directory')
  const settings: FetchedSourceSettings = {
    kind,
    host: hostName(input.host, 'host'),
    port: port(input.port, 'port', 22),
    user: text(input.user, 'user', 255),
    path: remotePath,
    host_key_sha256: fingerprint(input.host_key_sha256, 'host_key_sha256'),
    ...readFormat(input, remotePath),
  }
  return { settings, credentials: readLoginCredentials('sftp', input, '') }
}

function readUrl(value: unknown): string {
  const url = text(value, 'url', 2000)
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new BadRequestError(`url: "${url.slice(0, 100)}" is not a URL`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new BadRequestError('url: an http or https URL')
  if (parsed.username !== '' || parsed.password !== '') throw new BadRequestError('url: credentials go in auth, not in the URL')
  parsed.hash = ''
  return parsed.href
}

/** `{"type":"basic","user","password"}` or `{"type":"header","name","value"}`; null or absent: none. */
function readAuth(value: unknown): { auth: { basic_user?: string; header_name?: string }; credentials: SourceCredentials | undefined } {
  if (value === undefined || value === null) return { auth: {}, credentials: undefined }
  if (typeof value !== 'object' || Array.isArray(value)) throw new BadRequestError('auth: an object, {"type":"basic",…} or {"type":"header",…}')
  const auth = value as Record<string, unknown>
  const given = (field: string) => auth[field] !== undefined && auth[field] !== null
  if (auth.type === 'basic') {
    const user = text(auth.user, 'auth.user', 255)
    if (user.includes(':')) throw new BadRequestError('auth.user: a basic-auth user name cannot contain ":"')
    return { auth: { basic_user: user }, credentials: given('password') ? { password: secretText(auth.password, 'auth.password', 1024) } : undefined }
  }
  if (auth.type === 'header') {
    const name = text(auth.name, 'auth.name', 100)
    if (!TOKEN.test(name)) throw new BadRequestError(`auth.name: "${name.slice(0, 100)}" is not a header name`)
    if (MANAGED_HEADERS.has(name.toLowerCase())) throw new BadRequestError(`auth.name: ${name} is set by the fetch itself`)
    if (NOT_HEADERS.has(name.toLowerCase())) throw new BadRequestError(`auth.name: "${name}" is not a header name`)
    return { auth: { header_name: name }, credentials: given('value') ? { header_value: headerValue(auth.value) } : undefined }
  }
  throw new BadRequestError('auth.type: "basic" (user and password) or "header" (name and value)')
}

/** A header's value as HTTP carries it: visible ASCII and Latin-1, spaces inside (Node refuses anything else when it sends). */
function headerValue(value: unknown): string {
  const written = text(value, 'auth.value', 4096)
  if (/[^\t\x20-\x7e\x80-\xff]/.test(written)) throw new BadRequestError('auth.value: a header value holds ASCII and Latin-1 characters only')
  return written
}

/** The format, named or told by the file's extension (`.csv.gz` is csv), and how to read it. */
function readFormat(input: FetchedSourceInput, filePath: string): SourceFileFormat {
  const format = input.format === undefined || input.format === null || input.format === '' ? formatOfPath(filePath) : input.format
  if (!FORMATS.includes(format as SourceFileFormat['format'])) {
    throw new BadRequestError(`format: one of ${FORMATS.join(', ')}${input.format === undefined ? ' (the file name does not tell)' : ''}`)
  }
  const chosen = format as SourceFileFormat['format']
  const read: SourceFileFormat = {
    format: chosen,
    id_column: input.id_column === undefined || input.id_column === null ? 'id' : text(input.id_column, 'id_column', 255),
  }
  const delimited = chosen === 'csv' || chosen === 'tsv'
  for (const field of ['delimiter', 'quote', 'header'] as const) {
    if (!delimited && input[field] !== undefined && input[field] !== null) throw new BadRequestError(`${field}: applies to csv and tsv sources only`)
  }
  if (chosen !== 'xml' && input.item_element !== undefined && input.item_element !== null)
    throw new BadRequestError('item_element: applies to xml sources only')
  if (delimited) {
    read.delimiter = character(input.delimiter, 'delimiter', chosen === 'tsv' ? '\t' : ',', false)
    read.quote = character(input.quote, 'quote', '"', true)
    if (read.quote !== '' && read.quote === read.delimiter) throw new BadRequestError('quote: must differ from the delimiter')
    if (input.header !== undefined && input.header !== null && typeof input.header !== 'boolean') throw new BadRequestError('header: true or false')
    read.header = input.header ?? true
  }
  if (chosen === 'xml' && input.item_element !== undefined && input.item_element !== null) {
    const element = text(input.item_element, 'item_element', 100)
    if (!XML_NAME.test(element)) throw new BadRequestError(`item_element: "${element.slice(0, 100)}" is not an XML element name`)
    read.item_element = element
  }
  return read
}

function formatOfPath(filePath: string): string | undefined {
  const name = path.posix.basename(filePath).toLowerCase().replace(/\.gz$/, '')
  return EXTENSIONS[path.posix.extname(name)]
}

/** One character (a tab written `\t` too); `allowEmpty`: '' turns the feature off. */
function character(value: unknown, name: string, fallback: string, allowEmpty: boolean): string {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'string') throw new BadRequestError(`${name}: a single character`)
  const written = value === '\\t' ? '\t' : value
  if (written === '' && allowEmpty) return ''
  if ([...written].length !== 1 || written === '\n' || written === '\r') throw new BadRequestError(`${name}: a single character other than a line break`)
  return written
}
