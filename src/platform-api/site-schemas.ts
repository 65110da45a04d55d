import { SITE_STATUSES } from '../sites/site-input.js'
import { Type } from '@sinclair/typebox'
import { IdempotencyHeaders } from '../http/idempotent-answer.js'
import {
  Envelope,
  NullableBoolean,
  NullableOneOf,
  NullableString,
  ProjectParams,
  ProjectSiteParams,
  SiteParams,
  SuccessBody,
  conflictResponse,
  errorResponses,
  writeErrorResponses,
} from './schemas.js'
import { SiteOut } from './views.js'

// The request and response schemas of the site routes (site-routes.ts), one per operation.

const SiteBody = Type.Object({
  id: Type.Optional(NullableString()),
  title: Type.Optional(NullableString()),
  reference: Type.Optional(NullableString()),
  // A string: ids are bigints, past a JSON number's precision; readSiteChanges (site-input.ts) wants a positive integer.
  project_id: Type.Optional(NullableString({ description: 'integer; a string of digits is accepted' })),
  id_column: Type.Optional(NullableString()),
  status: Type.Optional(NullableOneOf(SITE_STATUSES)),
  import_schedule: Type.Optional(NullableString()),
  created_at: Type.Optional(NullableString()),
})
const CopyBody = Type.Object({
  site_name: Type.Optional(NullableString()),
  // A string, as above: copySite (copy-site.ts) wants a positive integer.
  project_id: Type.Optional(NullableString()),
  copy_export: Type.Optional(NullableBoolean()),
  copy_schedule_and_trigger: Type.Optional(NullableBoolean()),
  copy_shared_setting: Type.Optional(NullableBoolean()),
})
const Sites = Envelope('Sites', SiteOut)
const tags = ['sites']

export const listSitesSchema = { operationId: 'listSites', tags, response: { 200: Sites, ...errorResponses } }
export const createSiteSchema = {
  operationId: 'createSite',
  headers: IdempotencyHeaders,
  tags,
  body: SiteBody,
  response: { 201: Sites, ...writeErrorResponses, ...conflictResponse },
}
export const getSiteSchema = { operationId: 'getSite', tags, params: SiteParams, response: { 200: Sites, ...errorResponses } }
export const updateSiteSchema = {
  operationId: 'updateSite',
  tags,
  params: SiteParams,
  body: SiteBody,
  response: { 200: Sites, ...writeErrorResponses, ...conflictResponse },
}
export const deleteSiteSchema = { operationId: 'deleteSite', tags, params: SiteParams, response: { 200: SuccessBody, ...errorResponses } }
export const copySiteSchema = {
  operationId: 'copySite',
  tags,
  headers: IdempotencyHeaders,
  params: SiteParams,
  body: CopyBody,
  response: { 201: Sites, ...writeErrorResponses },
}

export const listProjectSitesSchema = { operationId: 'listProjectSites', tags, params: ProjectParams, response: { 200: Sites, ...errorResponses } }
export const createProjectSiteSchema = {
  operationId: 'createProjectSite',
  headers: IdempotencyHeaders,
  tags,
  params: ProjectParams,
  body: SiteBody,
  response: { 201: Sites, ...writeErrorResponses, ...conflictResponse },
}
export const getProjectSiteSchema = { operationId: 'getProjectSite', tags, params: ProjectSiteParams, response: { 200: Sites, ...errorResponses } }
export const updateProjectSiteSchema = {
  operationId: 'updateProjectSite',
  tags,
  params: ProjectSiteParams,
  body: SiteBody,
  response: { 200: Sites, ...writeErrorResponses, ...conflictResponse },
}
export const deleteProjectSiteSchema = {
  operationId: 'deleteProjectSite',
  tags,
  params: ProjectSiteParams,
  response: { 200: SuccessBody, ...errorResponses },
}
