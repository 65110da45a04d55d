import type { ChannelFilename, ColumnMapping, FeedFormat, ValidationMode } from '../db/schema.js'
import type { DestinationKind } from '../db/schema.js'
import { readFileDestination, type FileDestination, type FileDestinationInput } from './file-destination-input.js'
import { GENERIC_TEMPLATE, templateNamed, templateOfExportName } from '../templates/template-catalog.js'
import { ISO_4217_CODES } from '../templates/iso-4217.js'
import { BadRequestError } from '../errors.js'
import { OutboundRefusedError, type OutboundGuard } from '../net/outbound-guard.js'
import { checkText, excerpt } from '../input/text-input.js'
import { ChannelSettingError, checkFilenames, checkMapping, type FilenameIds } from './channel-settings.js'
import { readSafety, readShare, type SafetyInput } from './channel-safety-input.js'

// What a client may send to configure a channel (docs/design.md 5.8): every field is checked here, so
// that an export never meets a configuration it cannot carry out for a reason the client could
// have been told at once. What an export needs of the mapping and the file names is checked by the
// export's own rules (channel-settings.ts); the bounds on top of them are a tenant's share.

export const FORMATS: readonly FeedFormat[] = ['csv', 'tsv', 'ndjson', 'xml']
export const MAX_MAPPED_COLUMNS = 500
const MAX_FILENAMES = 10
const MAX_DESTINATIONS = 10
export const DESTINATION_KINDS: readonly DestinationKind[] = ['feed', 'http', 'sftp', 'ftps']

export interface DestinationInput extends FileDestinationInput {
  type?: string | null
  name?: string | null
  active?: boolean | null
  url?: string | null
}

/** A destination as saved: a feed URL, an http POST, or a file server with its settings (and new credentials, if given). */
export interface DestinationConfig {
  kind: DestinationKind
  name: string | null
  active: boolean
  url: string | null
  file: FileDestination | null
}

export interface ChannelInput extends SafetyInput {
  name?: string | null
  export_name?: string | null
  active?: boolean | null
  format?: string | null
  mapping?: unknown
  filter?: string | null
  filenames?: unknown
  destinations?: DestinationInput[] | null
  validation_mode?: string | null
  currency?: string | null
  /** A number, a number as text, "" (none) or null (not given); anything else is a 400 naming the field. */
  readiness_threshold?: unknown
}

export interface ChannelConfig {
  name: string
  exportName: string
  active: boolean
  format: FeedFormat
  mapping: ColumnMapping[]
  filter: string
  filenames: ChannelFilename[]
  destinations: DestinationConfig[] | undefined
  /** The built-in template export_name picks (template-catalog.ts), chosen when export_name is saved. */
  template: string
  validationMode: ValidationMode
  currency: string | null
  readinessThreshold: number | null
  /** Safety stops (src/exports/safety-stop.ts); null: off. */
  safetyMaxDrop: number | null
  safetyMaxLeftOut: number | null
  safetyMinProducts: number | null
}

export const VALIDATION_MODES: readonly ValidationMode[] = ['exclude', 'warn_only']

/** A complete configuration from a create body, or from an update body over the current one. */
export function readChannelInput(input: ChannelInput, current?: ChannelConfig): ChannelConfig {
  const name = text(input.name, 'name') ?? current?.name
  if (!name) throw new BadRequestError('name: is required')
  const exportName = text(input.export_name, 'export_name') ?? current?.exportName
  if (!exportName) throw new BadRequestError('export_name: is required (the export template this channel uses)')
  // A saved export_name picks the template again (a new name, or the same one sent back whole).
  const template =
    input.export_name === undefined || input.export_name === null
      ? (templateNamed(current?.template ?? '') ?? GENERIC_TEMPLATE)
      : templateOfExportName(exportName)
  const format = (input.format ?? current?.format ?? template.defaultFormat) as FeedFormat
  if (!FORMATS.includes(format)) throw new BadRequestError(`format: must be one of ${FORMATS.join(', ')}`)
  if (!template.formats.includes(format)) {
    throw new BadRequestError(`format: the ${template.name} template's channel reads ${template.formats.join(', ')}, not ${format}`)
  }
  // A kept mapping is checked again: a new format may not write its names.
  const mapping = readMapping(input.mapping === undefined || input.mapping === null ? (current?.mapping ?? []) : input.mapping, format)
  const filenames =
    input.filenames === undefined || input.filenames === null
      ? (current?.filenames ?? [{ type: null, filename: `{channel_id}.${format === 'ndjson' ? 'ndjson' : format}` }])
      : readFilenames(input.filenames)
  // Postgres cannot store NUL; the filter's own rules are the filter parser's.
  if (input.filter?.includes('\0')) throw new BadRequestError('filter: must not contain NUL (\\u0000)')
  const filter = input.filter === undefined || input.filter === null ? (current?.filter ?? '') : input.filter
  return {
    name,
    exportName,
    active: input.active ?? current?.active ?? true,
    format,
    mapping,
    filter,
    filenames,
    destinations: input.destinations === undefined || input.destinations === null ? current?.destinations : readDestinations(input.destinations),
    template: template.name,
    ...readValidation(input, current),
    ...readSafety(input, current),
  }
}

/** How the channel applies its template; a field not given keeps its current value. */
function readValidation(input: ChannelInput, current: ChannelConfig | undefined): Pick<ChannelConfig, 'validationMode' | 'currency' | 'readinessThreshold'> {
  const validationMode = (input.validation_mode ?? current?.validationMode ?? 'exclude') as ValidationMode
  if (!VALIDATION_MODES.includes(validationMode)) {
    throw new BadRequestError('validation_mode: must be exclude (products failing a required rule are left out of the feed) or warn_only')
  }
  let currency = current?.currency ?? null
  if (typeof input.currency === 'string') {
    currency = input.currency.trim() === '' ? null : input.currency.trim()
    if (currency !== null && !ISO_4217_CODES.includes(currency)) {
      throw new BadRequestError(`currency: ${JSON.stringify(currency.slice(0, 40))} is not an ISO 4217 currency code (EUR, USD, …); "" removes it`)
    }
  }
  const readinessThreshold = readShare(
    input.readiness_threshold,
    current?.readinessThreshold ?? null,
    'readiness_threshold',
    'a number from 0 to 1 (the share of products without errors); "" removes it',
  )
  return { validationMode, currency, readinessThreshold }
}

function text(value: string | null | undefined, field: string): string | undefined {
  if (value === undefined || value === null) return undefined
  const trimmed = checkText(value.trim(), field)
  if (trimmed === '') throw new BadRequestError(`${field}: must not be empty`)
  return trimmed
}

function readMapping(value: unknown, format: FeedFormat): ColumnMapping[] {
  if (Array.isArray(value)) {
    if (value.length > MAX_MAPPED_COLUMNS) throw new BadRequestError(`mapping: at most ${MAX_MAPPED_COLUMNS} columns`)
    for (const [i, entry] of value.entries()) {
      const column: unknown = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>).column : undefined
      if (typeof column === 'string') checkText(column, `mapping[${i}].column`)
    }
  }
  return saveRule(() => checkMapping(value, format))
}

function readFilenames(value: unknown): ChannelFilename[] {
  if (Array.isArray(value)) {
    if (value.length > MAX_FILENAMES) throw new BadRequestError(`filenames: at most ${MAX_FILENAMES}`)
    for (const [i, entry] of value.entries()) {
      const filename: unknown =
        typeof entry === 'string' ? entry : typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>).filename : undefined
      if (typeof filename === 'string') checkText(filename, `filenames[${i}].filename`)
    }
  }
  // The channel's id is not known yet on a create: checkSavedFilenames checks again once it is.
  return saveRule(() => checkFilenames(value, undefined))
}

/**
 * The file names of a channel checked with its own ids, inside the transaction that stores it (a
 * create knows its channel's id only then): two templates may name the same file only given the ids.
 */
export function checkSavedFilenames(filenames: ChannelFilename[], ids: FilenameIds): void {
  saveRule(() => checkFilenames(filenames, ids))
}

/** An export rule's refusal as the 400 it is at save time, naming the field. */
function saveRule<T>(check: () => T): T {
  try {
    return check()
  } catch (error) {
    if (error instanceof ChannelSettingError) throw new BadRequestError(error.message)
    throw error
  }
}

function readDestinations(value: DestinationInput[]): ChannelConfig['destinations'] {
  if (!Array.isArray(value) || value.length > MAX_DESTINATIONS) throw new BadRequestError(`destinations: an array of at most ${MAX_DESTINATIONS}`)
  return value.map((item, i): DestinationConfig => {
    const kind = (item.type ?? 'feed') as DestinationKind
    if (!DESTINATION_KINDS.includes(kind)) {
      throw new BadRequestError(
        `destinations[${i}].type: must be feed (served by the platform), http (POSTed to a URL), sftp or ftps (uploaded to a file server)`,
      )
    }
    const name = typeof item.name === 'string' ? checkText(item.name, `destinations[${i}].name`) : null
    const file = kind === 'sftp' || kind === 'ftps' ? readFileDestination(kind, item, `destinations[${i}]`) : null
    return { kind, name, active: item.active ?? true, url: kind === 'http' ? readHttpUrl(item.url, i) : null, file }
  })
}

function readHttpUrl(value: string | null | undefined, i: number): string {
  let url: string
  try {
    const parsed = new URL(value ?? '')
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme')
    url = parsed.toString()
  } catch {
    throw new BadRequestError(`destinations[${i}].url: an http or https URL is required for type http`)
  }
  // A password stored in a URL is shown back in every channel read and every error message.
  if (new URL(url).username !== '' || new URL(url).password !== '') {
    throw new BadRequestError(`destinations[${i}].url: credentials in the URL are not allowed; use a token in the path or query instead`)
  }
  return url
}

/**
 * The outbound guard's save-time check of the http destinations of a request body: a URL whose
 * host is, or now resolves to, loopback, a private network or a metadata service, or does not
 * resolve at all, is refused (400) before it is stored. Pushes check again when they connect. Awaited outside any transaction: it
 * may wait on DNS.
 */
export async function guardDestinations(guard: OutboundGuard, destinations: DestinationInput[] | null | undefined): Promise<void> {
  if (!Array.isArray(destinations)) return
  for (const [i, item] of destinations.entries()) {
    const fileServer = (item.type === 'sftp' || item.type === 'ftps') && typeof item.host === 'string'
    if (!fileServer && (item.type !== 'http' || typeof item.url !== 'string')) continue
    try {
      if (fileServer) await guard.checkHost(String(item.host))
      else await guard.checkUrl(String(item.url))
    } catch (error) {
      if (!(error instanceof OutboundRefusedError)) throw error
      const field = fileServer ? `destinations[${i}].host` : `destinations[${i}].url`
      throw new BadRequestError(`${field}: ${excerpt(String(fileServer ? item.host : item.url))} is not allowed: ${error.reason}`)
    }
  }
}
