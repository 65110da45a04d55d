import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { readStagePage, stageProperties, type StageQuery } from '../catalog/stage-reads.js'
import { BadRequestError } from '../errors.js'
import { jsonTextStream } from '../http/json-stream.js'
import { type PlatformDeps } from './deps.js'
import { errorResponses, readBudgetResponses } from './schemas.js'
import { accountOf } from '../auth/caller.js'

// Product data reads (docs/interface.md "Platform: product data", docs/compatibility.md): stage `import` or its alias
// `intermediate`, the stage id left out when it is 0, a trailing slash, and `fields` as a list
// (`fields=id,gtin`), repeated (`fields=id&fields=gtin`) or indexed (`fields[0]=id&fields[1]=gtin`).
const RowsQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
    offset: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 }),
    hidden: Type.Integer({ minimum: 0, maximum: 1, default: 0, description: '1 shows the columns whose names start with ___' }),
    filter: Type.Optional(Type.String({ description: "a condition in SQL syntax, e.g. brand = 'Acme' AND price > 10" })),
    fields: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description: 'columns to return, in this order' })),
  },
  { additionalProperties: true },
)
const PropertiesQuery = Type.Object({ hidden: Type.Integer({ minimum: 0, maximum: 1, default: 0 }) }, { additionalProperties: true })
const Rows = Type.Object({ success: Type.Literal(true), products: Type.Array(Type.Record(Type.String(), Type.String())) })
const Properties = Type.Object({ success: Type.Literal(true), columns: Type.Array(Type.String()), products: Type.Integer() })
const StageName = Type.String({ description: 'import (also intermediate) or channel' })
// The stage id may be left out when it is 0 (docs/compatibility.md): two routes, each declaring what its path has.
const StageParams = Type.Object({ siteId: Type.String(), stageName: StageName })
const StageIdParams = Type.Object({
  siteId: Type.String(),
  stageName: StageName,
  stageId: Type.String({ description: '0 for the import stage; the channel id' }),
})
const stageUrls = [
  { path: '/site/:siteId/stage/:stageName', params: StageParams, id: 'NoStageId' },
  { path: '/site/:siteId/stage/:stageName/:stageId', params: StageIdParams, id: '' },
] as const
const tags = ['product data']

/** `fields` in any of its three forms, in the order asked. */
export function fieldList(query: Record<string, unknown>): string[] {
  const indexed = Object.keys(query)
    .map((key) => /^fields\[(\d+)\]$/.exec(key))
    .filter((match): match is RegExpExecArray => match !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]))
    .map((match) => query[match[0]])
  const plain = query.fields === undefined ? [] : Array.isArray(query.fields) ? query.fields : [query.fields]
  const names = [...plain, ...indexed].flatMap((value) => {
    if (typeof value !== 'string') throw new BadRequestError('fields: each entry must be a column name')
    return value.split(',')
  })
  return names.map((name) => name.trim()).filter((name) => name !== '')
}

export const productRoutes: FastifyPluginAsyncTypebox<PlatformDeps> = async (app, { db, config, readSlots }) => {
  const budget = { maxBytes: config.PRODUCT_READ_MAX_BYTES, timeoutMs: config.PRODUCT_READ_TIMEOUT_MS, slots: readSlots }
  const rowsResponses = { 200: Rows, ...errorResponses, ...readBudgetResponses }
  for (const { path, params, id } of stageUrls) {
    const schema = { operationId: `readStageProducts${id}`, tags, params, querystring: RowsQuery, response: rowsResponses }
    app.get(path, { schema }, async (request, reply) => {
      const { siteId, stageName } = request.params
      const stageId = 'stageId' in request.params ? request.params.stageId : undefined
      const q = request.query
      const query: StageQuery = { limit: q.limit, offset: q.offset, hidden: q.hidden === 1, filter: q.filter, fields: fieldList(q) }
      const products = await readStagePage(db, accountOf(request), siteId, { name: stageName, id: stageId }, query, budget)
      // Already JSON, written row by row within the read budget: streamed as it is, not serialised again.
      return (reply as FastifyReply).type('application/json; charset=utf-8').send(jsonTextStream('{"success":true,"products":[', products, ']}'))
    })
  }
  for (const { path, params, id } of stageUrls) {
    const schema = { operationId: `readStageProperties${id}`, tags, params, querystring: PropertiesQuery, response: { 200: Properties, ...errorResponses } }
    app.get(`${path}/properties`, { schema }, async (request) => {
      const { siteId, stageName } = request.params
      const stageId = 'stageId' in request.params ? request.params.stageId : undefined
      const properties = await stageProperties(db, accountOf(request), siteId, { name: stageName, id: stageId }, request.query.hidden === 1)
      return { success: true as const, ...properties }
    })
  }
}
