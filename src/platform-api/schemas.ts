import { Type, type Static, type TSchema } from '@sinclair/typebox'

// Clients send every field of a model with null for unset ones (docs/compatibility.md). A type array keeps
// Ajv's coercion predictable ("12" -> 12, null stays null), which an anyOf of branches does not.
export function Nullable<T extends TSchema & { type: string }>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] })
}

export const NullableString = (options: Record<string, unknown> = {}) => Nullable(Type.String(options))
export const NullableInteger = (options: Record<string, unknown> = {}) => Nullable(Type.Integer(options))
export const NullableBoolean = () => Nullable(Type.Boolean())

// A closed set of texts, from the domain's own list (never a copy): an enum, so that the validator's
// message lists the values (`severity: must be one of error, warning, info`), which an anyOf of
// literals does not, and the route reads the value as the domain's type.
export function OneOf<T extends string>(values: readonly T[], options: Record<string, unknown> = {}) {
  return Type.Unsafe<T>({ ...options, type: 'string', enum: [...values] })
}
export function NullableOneOf<T extends string>(values: readonly T[], options: Record<string, unknown> = {}) {
  return Type.Unsafe<T | null>({ ...options, type: ['string', 'null'], enum: [...values, null] })
}

export const ErrorBody = Type.Object({ success: Type.Literal(false), message: Type.String() })
export const SuccessBody = Type.Object({ success: Type.Literal(true) })

export const Links = Type.Array(Type.Record(Type.String(), Type.String()), {
  description: 'one-key objects: relation name to absolute URL',
})

export const Timestamp = Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' })

/** The platform success envelope: `{success, <Name>: [...]}`. */
export function Envelope<K extends string, T extends TSchema>(name: K, item: T) {
  return Type.Object({ success: Type.Literal(true), [name]: Type.Array(item) } as { success: ReturnType<typeof Type.Literal<true>> } & Record<
    K,
    ReturnType<typeof Type.Array<T>>
  >)
}

// The error answers of the platform interface, each with what it means (the OpenAPI document shows
// it; the body is the same `{success:false,message}` for every one).
const error = (description: string, headers?: Record<string, unknown>) =>
  Type.Object({ success: Type.Literal(false), message: Type.String() }, { description, ...(headers && { headers }) })
const retryAfter = { 'Retry-After': { type: 'integer', description: 'seconds to wait before trying again' } }

/** Error responses every platform route can give. */
export const errorResponses = {
  400: error('A path, query or body value breaks a rule; the message names the field and the rule'),
  401: error('The credential is missing or invalid (`Unauthorized`)'),
  404: error('The addressed resource (project, site, tag, channel, data source, run…) is not in this account'),
  429: error('Too many requests for this credential and endpoint (PLATFORM_RATE_LIMIT), or too many failed authentications', retryAfter),
  500: error('Internal failure; the details are in the server log'),
}

/** Error responses of the routes that read a JSON body: also its size and encoding. */
export const writeErrorResponses = {
  ...errorResponses,
  413: error('The JSON body is larger than 1 MiB, as sent or once decompressed'),
  415: error('The body has a Content-Encoding other than gzip or deflate'),
}

/** The answer of a write that would break a uniqueness rule (a reference, a tag, a delivery in flight). */
export const conflictResponse = { 409: error('The write conflicts with what exists; the message says with what') }

/** The answers of a product read past its budget (READS_PER_ACCOUNT, PRODUCT_READ_TIMEOUT_MS). */
export const readBudgetResponses = {
  429: error('The account has READS_PER_ACCOUNT product reads in flight already, or the rate limit is reached', retryAfter),
  503: error('The read ran past PRODUCT_READ_TIMEOUT_MS and was cancelled'),
}

export const ProjectParams = Type.Object({ projectId: Type.String() })
export const SiteParams = Type.Object({ siteId: Type.String({ description: 'numeric id or <tagName>:<tagValue>' }) })
export const ProjectSiteParams = Type.Object({ projectId: Type.String(), siteId: Type.String() })
