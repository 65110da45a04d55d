import type { ChannelFilename, ColumnMapping, DeltaType, FeedFormat } from '../db/schema.js'
import { unwritableColumns } from '../feeds/feed-sql.js'

// The rules a channel's mapping and file names must follow for its export to be able to write them.
// One rule, two callers: a save checks them (a 400, see channel-input.ts) and so does every export
// (site error 2007, see export-failures.ts), for channels stored before a rule existed. What a save
// accepts, an export can therefore always write.

export const DELTA_TYPES: readonly DeltaType[] = ['new', 'modified', 'unchanged', 'deleted', 'skipped']
// A filename template: safe characters and the three placeholders, nothing that could leave the
// channel's directory or need quoting in a URL.
const FILENAME = /^(?:[A-Za-z0-9._-]|\{site_id\}|\{channel_id\}|\{date\})+$/
// The longest file name common file systems take, in bytes.
export const MAX_FILENAME_BYTES = 255
// Ids are bigint: a site copy or a later channel may have one of up to 19 digits.
const LONGEST_ID = '9223372036854775807'

/** A setting an export could not carry out: the field (`mapping[2].column`) and why. */
export class ChannelSettingError extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`)
    this.name = 'ChannelSettingError'
  }
}

// jsonb cannot hold a lone surrogate: Postgres would refuse the whole mapping.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u

function checkChars(text: string, field: string): void {
  if (text.includes('\0')) throw new ChannelSettingError(field, 'must not contain NUL (\\u0000)')
  if (LONE_SURROGATE.test(text)) throw new ChannelSettingError(field, 'must not contain a lone UTF-16 surrogate')
}

/** The mapping as stored or sent, checked: its shape, distinct columns, and names its format can write. */
export function checkMapping(value: unknown, format: FeedFormat): ColumnMapping[] {
  if (!Array.isArray(value)) throw new ChannelSettingError('mapping', 'must be an array of {"column", "source"} or {"column", "value"} objects')
  const seen = new Set<string>()
  const mapping = value.map((entry: unknown, i): ColumnMapping => {
    const item = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>
    const column = item.column
    if (typeof column !== 'string' || column.trim() === '') throw new ChannelSettingError(`mapping[${i}].column`, 'must be a non-empty column name')
    checkChars(column, `mapping[${i}].column`)
    if (seen.has(column)) throw new ChannelSettingError(`mapping[${i}].column`, `${JSON.stringify(column)} appears twice`)
    seen.add(column)
    const hasSource = typeof item.source === 'string' && item.source !== ''
    const hasValue = typeof item.value === 'string'
    if (hasSource === hasValue) throw new ChannelSettingError(`mapping[${i}]`, 'give exactly one of "source" (a stage column) or "value" (a constant text)')
    // A source names a stage column, whose length is the stage's rule.
    if (hasSource) return { column, source: checkedText(item.source as string, `mapping[${i}].source`) }
    return { column, value: checkedText(item.value as string, `mapping[${i}].value`) }
  })
  // The writers' own rule (feed-sql.ts), which they apply again to whatever they are given.
  const problem = unwritableColumns(
    mapping.map((m) => m.column),
    format,
  )
  if (problem) throw new ChannelSettingError(problem.index === undefined ? 'mapping' : `mapping[${problem.index}].column`, problem.reason)
  return mapping
}

function checkedText(text: string, field: string): string {
  checkChars(text, field)
  return text
}

/** A template with its placeholders filled in: ids as given, {date} as the UTC day of `date`. */
export function resolveFilename(template: string, ids: FilenameIds, date: Date): string {
  return template.replaceAll('{site_id}', ids.siteId).replaceAll('{channel_id}', ids.channelId).replaceAll('{date}', date.toISOString().slice(0, 10))
}

export interface FilenameIds {
  siteId: string
  channelId: string
}

/**
 * The filename templates as stored or sent, checked. With `date` (an export), the names of that day
 * must fit a file system and differ. Without (a save), they must for any day and any later id: the
 * longest expansion fits ({site_id} and {channel_id} of 19 digits, {date} of 10 characters), and no
 * two templates may name the same file on any day (`{site_id}.csv` is `5.csv` on site 5; without
 * `ids`, before a create knows its channel's id, only what holds whatever the ids are).
 */
export function checkFilenames(value: unknown, ids: FilenameIds | undefined, date?: Date): ChannelFilename[] {
  if (!Array.isArray(value) || value.length === 0) throw new ChannelSettingError('filenames', 'must be a non-empty array of {"type", "filename"}')
  const entries = value.map((entry: unknown, i) => filenameEntry(entry, i))
  for (const [i, entry] of entries.entries()) {
    const field = `filenames[${i}].filename`
    const longest = resolveFilename(entry.filename, date && ids ? ids : { siteId: LONGEST_ID, channelId: LONGEST_ID }, date ?? new Date(0))
    const bytes = Buffer.byteLength(longest)
    if (bytes > MAX_FILENAME_BYTES) {
      const why = date
        ? `the file name ${JSON.stringify(longest)} has ${bytes} bytes once its placeholders are filled in`
        : `${JSON.stringify(entry.filename)} can have ${bytes} bytes once its placeholders are filled in ({site_id} and {channel_id} up to 19 ` +
          `digits, {date} 10 characters)`
      throw new ChannelSettingError(field, `${why}, more than a file name can have (${MAX_FILENAME_BYTES}); shorten the channel's filename template`)
    }
    const earlier = entries.findIndex(
      (other, j) =>
        j < i &&
        (date && ids
          ? resolveFilename(other.filename, ids, date) === resolveFilename(entry.filename, ids, date)
          : mayCoincide(other.filename, entry.filename, ids)),
    )
    if (earlier >= 0) {
      const other = entries[earlier]?.filename ?? ''
      const reason =
        other === entry.filename
          ? `${JSON.stringify(entry.filename)} appears twice`
          : `${JSON.stringify(entry.filename)} ${date ? 'names' : 'can name'} the same file as filenames[${earlier}] ` +
            `(${JSON.stringify(other)})${date && ids ? `: ${JSON.stringify(resolveFilename(entry.filename, ids, date))}` : ''}; every file needs a ` +
            `name of its own`
      throw new ChannelSettingError(field, reason)
    }
  }
  return entries
}

function filenameEntry(entry: unknown, i: number): ChannelFilename {
  const item = (typeof entry === 'string' ? { filename: entry } : typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>
  const filename = item.filename
  if (typeof filename !== 'string' || !FILENAME.test(filename) || filename.startsWith('.')) {
    throw new ChannelSettingError(`filenames[${i}].filename`, 'use letters, digits, . _ - and {site_id}, {channel_id}, {date}; not starting with a dot')
  }
  const type = item.type ?? null
  if (type !== null && !DELTA_TYPES.includes(type as DeltaType))
    throw new ChannelSettingError(`filenames[${i}].type`, `must be null or one of ${DELTA_TYPES.join(', ')}`)
  return { type: type as DeltaType | null, filename }
}

// A template as a sequence of characters once its ids are filled in, where each {date} is the ten
// characters of a day: the dashes are fixed, a digit position (0-9) varies with the day.
type DateSymbol = string | number
const DAY: DateSymbol[] = [0, 1, 2, 3, '-', 5, 6, '-', 8, 9]

function symbolsOf(template: string, ids: FilenameIds | undefined): DateSymbol[] {
  // Unknown ids stay placeholders, which no other character of a template can match.
  const filled = ids ? template.replaceAll('{site_id}', ids.siteId).replaceAll('{channel_id}', ids.channelId) : template
  return filled.split('{date}').flatMap((part, i): DateSymbol[] => (i === 0 ? [...part] : [...DAY, ...part]))
}

/**
 * Whether two templates resolve to the same name on some day: both are filled in with the same day,
 * so each digit position of the day must take one value everywhere (a small unification).
 */
function mayCoincide(a: string, b: string, ids: FilenameIds | undefined): boolean {
  const left = symbolsOf(a, ids)
  const right = symbolsOf(b, ids)
  if (left.length !== right.length) return false
  const parent = Array.from({ length: 10 }, (_, i) => i)
  const digit: (string | undefined)[] = []
  const find = (x: number): number => (parent[x] === x ? x : find(parent[x] ?? x))
  const bind = (x: number, c: string): boolean => {
    const root = find(x)
    if (!/^\d$/.test(c) || (digit[root] !== undefined && digit[root] !== c)) return false
    digit[root] = c
    return true
  }
  return left.every((x, i) => {
    const y = right[i] ?? ''
    if (typeof x === 'string' && typeof y === 'string') return x === y
    if (typeof x === 'string') return bind(y as number, x)
    if (typeof y === 'string') return bind(x, y)
    const [rx, ry] = [find(x), find(y)]
    if (rx === ry) return true
    parent[rx] = ry
    const c = digit[rx]
    return c === undefined || bind(ry, c)
  })
}
