import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { accountLimits } from '../accounts/object-limits.js'
import { createTag, deleteTag, listTags, updateTag } from '../sites/tags.js'
import { accountOf, type PlatformDeps } from './deps.js'
import { Envelope, NullableString, SiteParams, SuccessBody, errorResponses } from './schemas.js'
import { TagOut, tagView } from './views.js'

const TagBody = Type.Object({
  id: Type.Optional(NullableString()),
  site_id: Type.Optional(NullableString()),
  key: Type.Optional(NullableString()),
  value: Type.Optional(NullableString()),
  readonly: Type.Optional(NullableString({ enum: ['0', '1', null], description: '0 or 1' })),
})
const TagParams = Type.Object({ siteId: Type.String(), tagId: Type.String() })
const Tags = Envelope('Tags', TagOut)
const tags = ['tags']

export const tagRoutes: FastifyPluginAsyncTypebox<PlatformDeps> = async (app, { db, config }) => {
  const limits = accountLimits(config)
  app.get('/sites/:siteId/tags', { schema: { tags, params: SiteParams, response: { 200: Tags, ...errorResponses } } }, async (request) => {
    const siteTags = await listTags(db, accountOf(request), request.params.siteId)
    return { success: true as const, Tags: siteTags.map(tagView) }
  })

  app.post(
    '/sites/:siteId/tags',
    { schema: { tags, params: SiteParams, body: TagBody, response: { 201: Tags, ...errorResponses } } },
    async (request, reply) => {
      const tag = await createTag(db, accountOf(request), request.params.siteId, request.body, limits)
      return reply.code(201).send({ success: true as const, Tags: [tagView(tag)] })
    },
  )

  app.put(
    '/sites/:siteId/tags/:tagId',
    { schema: { tags, params: TagParams, body: TagBody, response: { 200: Tags, ...errorResponses } } },
    async (request) => {
      const tag = await updateTag(db, accountOf(request), request.params.siteId, request.params.tagId, request.body)
      return { success: true as const, Tags: [tagView(tag)] }
    },
  )

  app.delete('/sites/:siteId/tags/:tagId', { schema: { tags, params: TagParams, response: { 200: SuccessBody, ...errorResponses } } }, async (request) => {
    await deleteTag(db, accountOf(request), request.params.siteId, request.params.tagId)
    return { success: true as const }
  })
}
