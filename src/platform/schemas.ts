import { Type, type Static, type TSchema } from '@sinclair/typebox'

// Clients send every field of a model with null for unset ones (COMPAT.md). A type array keeps
// Ajv's coercion predictable ("12" -> 12, null stays null), which an anyOf of branches does not.
export function Nullable<T extends TSchema & { type: string }>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] })
}

export const NullableString = (options: Record<string, unknown> = {}) => Nullable(Type.String(options))
export const NullableInteger = (options: Record<string, unknown> = {}) => Nullable(Type.Integer(options))
export const NullableBoolean = () => Nullable(Type.Boolean())

export const ErrorBody = Type.Object({ success: Type.Literal(false), message: Type.String() }, { $id: 'PlatformError' })
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

/** Error responses every platform route can give. */
export const errorResponses = {
  400: ErrorBody,
  401: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  500: ErrorBody,
}

export const ProjectParams = Type.Object({ projectId: Type.String() })
export const SiteParams = Type.Object({ siteId: Type.String({ description: 'numeric id or <tagName>:<tagValue>' }) })
export const ProjectSiteParams = Type.Object({ projectId: Type.String(), siteId: Type.String() })
