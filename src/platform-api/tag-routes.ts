import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { accountLimits } from '../accounts/object-limits.js'
import { createTag, deleteTag, getTag, listTags, updateTag } from '../sites/tags.js'
import { type PlatformDeps } from './deps.js'
import { Envelope, NullableString, SiteParams, SuccessBody, conflictResponse, errorResponses, writeErrorResponses } from './schemas.js'
import { TagOut, tagView } from './views.js'
import { accountOf } from '../auth/caller.js'
import { IdempotencyHeaders, answerOnce } from '../http/idempotent-answer.js'

const TagBody = Type.Object({
  id: Type.Optional(NullableString()),
  site_id: Type.Optional(NullableString()),
  key: Type.Optional(NullableString()),
  value: Type.Optional(NullableString()),
  readonly: Type.Optional(NullableString({ enum: ['0', '1', null], description: '0 or 1' })),
})
const TagParams = Type.Object({ siteId: Type.String(), tagId: Type.String() })
const SitelessTagParams = Type.Object({ tagId: Type.String() })
const Tags = Envelope('Tags', TagOut)
const tags = ['tags']
const writeErrors = { ...writeErrorResponses, ...conflictResponse }

// The path parameters of both forms of the tag routes: the site is absent from the site-less one.
const siteOf = (request: { params: unknown }) => (request.params as { siteId?: string }).siteId
const tagOf = (request: { params: unknown }) => (request.params as { tagId: string }).tagId

export const tagRoutes: FastifyPluginAsyncTypebox<PlatformDeps> = async (app, deps) => {
  const { db, config } = deps
  const limits = accountLimits(config)
  app.get(
    '/sites/:siteId/tags',
    { schema: { operationId: 'listSiteTags', tags, params: SiteParams, response: { 200: Tags, ...errorResponses } } },
    async (request) => {
      const siteTags = await listTags(db, accountOf(request), request.params.siteId)
      return { success: true as const, Tags: siteTags.map(tagView) }
    },
  )

  // A tag is addressed below its site (docs/interface.md) or, as the PHP client does when no site is set, on
  // its own: `/tags` with `site_id` in the body, `/tags/{tagId}`.
  for (const [base, params, single, name] of [
    ['/sites/:siteId/tags', SiteParams, TagParams, 'SiteTag'],
    ['/tags', Type.Object({}), SitelessTagParams, 'Tag'],
  ] as const) {
    app.post(
      base,
      { schema: { operationId: `create${name}`, tags, headers: IdempotencyHeaders, params, body: TagBody, response: { 201: Tags, ...writeErrors } } },
      async (request, reply) =>
        answerOnce(request, reply, deps, {
          run: () => createTag(db, accountOf(request), siteOf(request), request.body, limits),
          render: (tag) => ({ status: 201, body: { success: true as const, Tags: [tagView(tag)] } }),
        }),
    )

    app.get(`${base}/:tagId`, { schema: { operationId: `get${name}`, tags, params: single, response: { 200: Tags, ...errorResponses } } }, async (request) => ({
      success: true as const,
      Tags: [tagView(await getTag(db, accountOf(request), siteOf(request), tagOf(request)))],
    }))

    app.put(
      `${base}/:tagId`,
      { schema: { operationId: `update${name}`, tags, params: single, body: TagBody, response: { 200: Tags, ...writeErrors } } },
      async (request) => ({
        success: true as const,
        Tags: [tagView(await updateTag(db, accountOf(request), siteOf(request), tagOf(request), request.body))],
      }),
    )

    app.delete(
      `${base}/:tagId`,
      { schema: { operationId: `delete${name}`, tags, params: single, response: { 200: SuccessBody, ...errorResponses } } },
      async (request) => {
        await deleteTag(db, accountOf(request), siteOf(request), tagOf(request))
        return { success: true as const }
      },
    )
  }
}
