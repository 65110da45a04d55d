import { STATUS_CODES } from 'node:http'
import type { RouteOptions } from 'fastify'
import type { AuthScheme } from '../auth/authenticate.js'
import '../auth/caller.js'

// The shared pieces of the OpenAPI document (/openapi.json, browsable at /docs): the two security
// schemes, each route's security as its `config.auth` says, and the examples each interface gives
// its operations by operationId, put in once the document is built.

/** The introduction of the reference (Markdown). */
export const API_DESCRIPTION = [
  'A product-feed platform on one server, with two interfaces.',
  '',
  '**Platform interface** (`/platform/v2`, `/product/v2`): projects, sites, tags, data sources, runs, channels, product reads ' +
    'and webhooks. JSON bodies; errors `{"success":false,"message":"…"}`; ids as strings; timestamps `YYYY-MM-DD HH:MM:SS` (UTC).',
  '',
  '**Stream interface** (`/streams`): streams, product uploads and batches. JSON:API documents (`application/vnd.api+json`); ' +
    'errors as a JSON:API `errors` array; timestamps ISO 8601 with offset; every answer carries `ratelimit-limit`, ' +
    '`ratelimit-observed`, `ratelimit-remaining` and `ratelimit-reset`.',
  '',
  '**Trying it out.** `npx catalog-platform accounts create --name Acme` prints an `X-Auth-Token` (`<client_id>:<client_secret>`) ' +
    'and a personal access token (`cpat_…`). Choose *Authorize* and enter both: each operation sends the credential it accepts ' +
    '(the X-Auth-Token on the platform interface, the token on the stream interface; the process, site data source and webhook ' +
    'endpoints take either). Every 429 carries `Retry-After`.',
  '',
  '**Retries and tracing.** Every answer carries `X-Request-Id` (yours when you send a plausible one), the id the activity log ' +
    'records with the change. Creating POSTs, uploads, deletes of products and `POST /process` take an `Idempotency-Key` header ' +
    '(1 to 255 visible ASCII characters): the first answer is stored with the change, in its transaction, and a repeat with the ' +
    'same key and request within IDEMPOTENCY_TTL_HOURS (default 24) gets it again with `Idempotent-Replayed: true`, changing ' +
    'nothing. A repeat while the first runs is a 409 with `Retry-After`; the key with another request a 422; a request refused ' +
    'before it changed anything keeps no key, so its retry runs again.',
].join('\n')

/** Tags of the routes outside the two interfaces. */
export const serviceTags = [
  { name: 'health', description: 'The health check of a server process, for load balancers; no credentials.' },
  { name: 'feeds', description: 'The exported feed files of channels with the built-in destination; no credentials, the URL is the secret.' },
]

/** The names of the security schemes, as the Authorize dialog of /docs shows them. */
export const X_AUTH_TOKEN = 'X-Auth-Token'
export const BEARER = 'PersonalAccessToken'

export const securitySchemes = {
  [X_AUTH_TOKEN]: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Auth-Token',
    description:
      'The platform credential, `<client_id>:<client_secret>`: the `X-Auth-Token:` line that ' +
      '`npx catalog-platform accounts create --name Acme` prints (`credentials rotate` issues a new one). ' +
      'Every platform endpoint takes it.',
  },
  [BEARER]: {
    type: 'http',
    scheme: 'bearer',
    description:
      'A personal access token (`cpat_…`): the `token:` line that `npx catalog-platform accounts create` ' +
      '(or `tokens create --account <id>`) prints. Enter the token alone; it is sent as `Authorization: Bearer <token>`. ' +
      'The stream interface takes only this; the process, site stream data source and webhook endpoints take it too.',
  },
} as const

type SecurityRequirement = Record<string, string[]>

/** What a route accepts, as an OpenAPI security list: alternatives, any one of which is enough. */
export function securityFor(auth: AuthScheme | 'none'): SecurityRequirement[] {
  switch (auth) {
    case 'none':
      return []
    case 'x-auth-token':
      return [{ [X_AUTH_TOKEN]: [] }]
    case 'bearer':
      return [{ [BEARER]: [] }]
    case 'x-auth-token-or-bearer':
      return [{ [X_AUTH_TOKEN]: [] }, { [BEARER]: [] }]
  }
}

export interface InterfaceDocs {
  /** The credentials a route of the interface accepts when its `config.auth` does not say. */
  auth: AuthScheme
  /** Media types of the interface's JSON bodies and answers; application/json when not given. */
  mediaTypes?: { consumes: string[]; produces: string[] }
}

/**
 * An onRoute hook for an interface plugin: documents each route's security from the `config.auth`
 * its authentication reads (or the interface's default), so that the document says what the
 * server checks. A route whose schema names its security already keeps it.
 */
export function documentRoutes({ auth, mediaTypes }: InterfaceDocs) {
  return (route: RouteOptions): void => {
    const schema = (route.schema ?? {}) as Record<string, unknown>
    if (schema.hide === true) return
    route.schema = {
      ...schema,
      security: schema.security ?? securityFor(route.config?.auth ?? auth),
      ...(mediaTypes && { consumes: schema.consumes ?? mediaTypes.consumes, produces: schema.produces ?? mediaTypes.produces }),
    } as RouteOptions['schema']
  }
}

/** One named example of a media type. */
export interface Example {
  summary?: string
  description?: string
  value: unknown
}

/** What the route schemas do not say about an operation: its prose, its examples, a body it reads itself. */
export interface OperationDocs {
  summary: string
  /** What it does and its notable rules and limits (Markdown). */
  description: string
  /** What the success answer holds, when its status alone (OK, Created…) does not say enough. */
  returns?: string
  /** The request body as documented, for a body the route reads as a stream rather than through a schema. */
  requestBody?: Record<string, unknown>
  /** Examples of the JSON request body, by name (every media type of the body gets them). */
  request?: Record<string, Example>
  /** Examples of the answers, by status code, then by name. */
  responses?: Record<string, Record<string, Example>>
}

/** Examples of the error bodies of an interface, by status code: the default for each error answer. */
export type ErrorExamples = Record<string, Example>

export interface DocumentDocs {
  /** Each operation's docs, by operationId. */
  operations: Record<string, OperationDocs>
  /** Error examples per interface, chosen by the error body the answer declares. */
  platformErrors: ErrorExamples
  streamErrors: ErrorExamples
}

interface MediaType {
  schema?: { properties?: Record<string, unknown> }
  example?: unknown
  examples?: Record<string, Example>
}
interface Operation {
  operationId?: string
  summary?: string
  description?: string
  requestBody?: { content?: Record<string, MediaType> }
  responses?: Record<string, { description?: string; content?: Record<string, MediaType> }>
}
type Document = { paths?: Record<string, Record<string, unknown>> }

/**
 * Completes a built document (swagger's transformObject): each operation's summary, description
 * and examples by its operationId, the interface's error example for every error answer without one
 * of its own, and an operation of its own for each method of a route that has several.
 */
export function completeDocument<T extends object>(document: T, docs: DocumentDocs): T {
  for (const item of Object.values((document as Document).paths ?? {})) {
    const seen = new Set<unknown>()
    for (const [method, value] of Object.entries(item)) {
      if (typeof value !== 'object' || value === null || !('responses' in value)) continue
      // One route with several methods gives each the same object: the second and later get a copy
      // with an operationId of their own (uploadProducts, uploadProductsPut, uploadProductsPatch).
      if (seen.has(value)) {
        const copy = structuredClone(value) as Operation
        if (copy.operationId) copy.operationId += method[0]?.toUpperCase() + method.slice(1)
        item[method] = copy
        continue
      }
      seen.add(value)
      describe(value as Operation, docs)
    }
  }
  return document
}

function describe(operation: Operation, docs: DocumentDocs): void {
  const own = operation.operationId ? docs.operations[operation.operationId] : undefined
  if (own) {
    operation.summary = own.summary
    operation.description = own.description
    if (own.requestBody) operation.requestBody = own.requestBody
    if (own.request) for (const media of Object.values(operation.requestBody?.content ?? {})) setExamples(media, own.request)
  }
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    // A response whose schema has no description of its own: what it holds, or its status text.
    if (response.description === 'Default Response') response.description = (/^2/.test(status) && own?.returns) || STATUS_CODES[status] || status
    for (const media of Object.values(response.content ?? {})) {
      const given = own?.responses?.[status] ?? (/^[45]/.test(status) ? errorExample(media, status, docs) : undefined)
      if (given) setExamples(media, given)
    }
  }
}

function setExamples(media: MediaType, examples: Record<string, Example>): void {
  delete media.example
  media.examples = examples
}

function errorExample(media: MediaType, status: string, docs: DocumentDocs): Record<string, Example> | undefined {
  const properties = media.schema?.properties ?? {}
  const byStatus = 'errors' in properties ? docs.streamErrors : 'success' in properties ? docs.platformErrors : {}
  const example = byStatus[status]
  return example && { [status]: example }
}
