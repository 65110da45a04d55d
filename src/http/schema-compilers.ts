import { AjvCompiler } from '@fastify/ajv-compiler'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'

// The route schemas compiled once per process rather than once per app: Fastify makes new compilers
// for every app it builds, and compiling every route's validators and serializers took about 0.8 s
// of CPU per app. A server builds one app, so this changes nothing for it; the test suite builds
// one per file (about 140 files on 2 cores), the same schema objects each time.

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>
type SerializerFactory = NonNullable<CompilersFactory['buildSerializer']>
type Serializer = ReturnType<ReturnType<SerializerFactory>>

// Pooled by their options and shared schemas: one Ajv for the same ones, which keeps each compiled
// schema by the schema object.
const validators = AjvCompiler()
const serializerFactory = SerializerSelector()
const serializerPools = new Map<string, { build: ReturnType<SerializerFactory>; bySchema: WeakMap<object, Serializer> }>()

const buildSerializer: SerializerFactory = (externalSchemas, serializerOptions) => {
  const key = JSON.stringify([externalSchemas, serializerOptions ?? null])
  let pool = serializerPools.get(key)
  if (!pool) serializerPools.set(key, (pool = { build: serializerFactory(externalSchemas, serializerOptions), bySchema: new WeakMap() }))
  const { build, bySchema } = pool
  return (route) => {
    const schema = route.schema as object
    let serializer = bySchema.get(schema)
    if (!serializer) bySchema.set(schema, (serializer = build(route)))
    return serializer
  }
}

export const sharedSchemaCompilers: CompilersFactory = { buildValidator: validators, buildSerializer }
