import type { OperationDocs } from '../http/openapi.js'
import { envelope, project, site, siteAt, tag } from './openapi-examples.js'

// The OpenAPI docs of the project, site and tag operations (by operationId; see src/http/openapi.ts).

const BASE = 'http://127.0.0.1:8080/platform/v2'

const deleted = { 200: { ok: { value: { success: true } } } }
const failed = (summary: string, message: string) => ({ [summary.replace(/\W+/g, '-').toLowerCase()]: { summary, value: { success: false, message } } })

const SITE_FIELDS =
  '`title` is required; `project_id` (unless the path names the project), `reference` (`<tagName>:<tagValue>`, unique, ' +
  'usable in place of the id in every path), `id_column` (default `id`; empty: no identifier column), `status` (`active`, ' +
  '`paused_upload`: imports but does not export, `disabled`: no runs) and `import_schedule` (an optional `TZ=<zone>` line, ' +
  'then five-field cron lines; `H` as the minute is a fixed minute per site; at most 50 lines, 2,000 characters) are optional. ' +
  '`id` and `created_at` must be empty. An account has at most `MAX_SITES_PER_ACCOUNT` (2,000) sites.'
const siteCreate = {
  request: {
    minimal: { summary: 'Title and project', value: { title: 'Shop DE', project_id: '1' } },
    full: {
      summary: 'With reference and schedule',
      value: { title: 'Shop DE', project_id: '1', reference: 'shop:de', id_column: 'id', status: 'active', import_schedule: 'TZ=Europe/Berlin\nH 3 * * *' },
    },
  },
  responses: {
    201: envelope('Sites', [site]),
    400: failed('Invalid status', 'status: must be one of active, paused_upload, disabled'),
    409: failed('Reference taken', 'reference: shop:de is already used by site 1'),
  },
}
const SITE_UPDATE =
  'Changes the fields given; a field left out or null stays as it is. `status` moves the site between `active`, ' +
  '`paused_upload` and `disabled`; an empty `import_schedule` removes every schedule. An `id` in the body must be the site in the path.'
const siteUpdate = {
  request: {
    pause: { summary: 'Pause exports', value: { status: 'paused_upload' } },
    schedule: { summary: 'Import at 03:xx and 15:xx, Berlin time', value: { import_schedule: 'TZ=Europe/Berlin\nH 3 * * *\nH 15 * * *' } },
  },
  responses: { 200: envelope('Sites', [{ ...site, status: 'paused_upload' }]) },
}
const SITE_DELETE =
  'Deletes the site with its tags, data sources, channels, runs and feed files, and answers `{"success":true}`. A queued ' +
  'run of the site never starts; a running one stops at its next write. Its streams and their data stay.'

const TAG_CREATE =
  'Adds a tag (`key`, `value`, both required, at most 255 characters each) to the site; `readonly` 1 protects it from ' +
  'changes and deletion. The tag then addresses the site in any path (`/sites/country:de`). At most `MAX_TAGS_PER_ACCOUNT` (50,000).'
const tagCreate = {
  request: { tag: { value: { key: 'country', value: 'de' } }, readonly: { summary: 'Read-only', value: { key: 'erp', value: '4711', readonly: '1' } } },
  responses: { 201: envelope('Tags', [tag]), 409: failed('Tag exists', 'Site 1 already has the tag country:de') },
}
const TAG_UPDATE = 'Changes `key` and/or `value`; a field left out or null stays. A read-only tag and the site reference cannot be changed (400).'
const tagUpdate = { request: { value: { value: { value: 'at' } } }, responses: { 200: envelope('Tags', [{ ...tag, value: 'at' }]) } }
const SITELESS = ' This form names no site, as the PHP client sends it when none is set: the tag alone identifies it.'

export const siteDocs: Record<string, OperationDocs> = {
  listProjects: {
    summary: 'List projects',
    description: 'Every project of the account, by id; each links to itself and to its sites.',
    responses: {
      200: envelope('Projects', [
        project,
        { id: '2', name: 'Marketplaces', created_at: '2026-11-22 09:12:40', links: [{ self: `${BASE}/projects/2` }, { sites: `${BASE}/projects/2/sites` }] },
      ]),
    },
  },
  createProject: {
    summary: 'Create a project',
    description:
      'Creates a project named `name` (required, at most 255 characters). `id` and `created_at` must be empty; null is fine, as ' +
      'clients send every field of the model. An account has at most `MAX_PROJECTS_PER_ACCOUNT` (1,000) projects.',
    request: {
      name: { value: { name: 'Webshop' } },
      nulls: { summary: 'Every field, null where unset', value: { id: null, name: 'Webshop', created_at: null } },
    },
    responses: { 201: envelope('Projects', [project]), 400: failed('Missing name', 'name: is required and must not be empty') },
  },
  getProject: {
    summary: 'Read a project',
    description: 'One project of the account, in a one-element `Projects` array.',
    responses: { 200: envelope('Projects', [project]) },
  },
  updateProject: {
    summary: 'Rename a project',
    description: "Sets the project's `name`; a field left out or null stays as it is. An `id` in the body must be the project in the path.",
    request: { rename: { value: { name: 'Webshop EU' } } },
    responses: { 200: envelope('Projects', [{ ...project, name: 'Webshop EU' }]) },
  },
  deleteProject: {
    summary: 'Delete a project',
    description: 'Deletes a project without sites and answers `{"success":true}`. A project that still has sites is refused (400): delete or move them first.',
    responses: { ...deleted, 400: failed('Project has sites', 'Project 1 still has sites; delete or move them first') },
  },
  listSites: {
    summary: 'List sites',
    description: 'Every site of the account, by id, not paged. In a listing each site carries in `availableProjectIds` only its own project.',
    responses: { 200: envelope('Sites', [site, siteAt]) },
  },
  createSite: { summary: 'Create a site', description: `Creates a site. ${SITE_FIELDS}`, ...siteCreate },
  getSite: {
    summary: 'Read a site, or the sites of a tag',
    description:
      'A numeric id answers that site, with every project id of the account in `availableProjectIds`. `<tagName>:<tagValue>` ' +
      'answers every site carrying that tag (the site whose reference it is first); 404 when none does.',
    responses: { 200: envelope('Sites', [site]) },
  },
  updateSite: { summary: 'Update a site', description: SITE_UPDATE, ...siteUpdate },
  deleteSite: { summary: 'Delete a site', description: SITE_DELETE, responses: deleted },
  copySite: {
    summary: 'Copy a site',
    description:
      'Creates a site named `site_name` (required) with the tags (not the reference), `id_column` and status of this one, in ' +
      '`project_id` (default: the same project). `copy_schedule_and_trigger` adds the import schedule, `copy_shared_setting` the ' +
      'data sources, `copy_export` the channels (with new feed URLs). A copy that would pass any account limit writes nothing.',
    request: { copy: { value: { site_name: 'Shop AT', copy_schedule_and_trigger: true, copy_shared_setting: true, copy_export: false } } },
    responses: { 201: envelope('Sites', [{ ...siteAt, import_schedule: site.import_schedule }]) },
  },
  listProjectSites: {
    summary: 'List the sites of a project',
    description: 'Every site of the project, by id, not paged; 404 for a project the account does not have.',
    responses: { 200: envelope('Sites', [site, siteAt]) },
  },
  createProjectSite: {
    summary: 'Create a site in a project',
    description: `Creates a site in the project of the path (a \`project_id\` in the body, null aside, must match it). ${SITE_FIELDS}`,
    ...siteCreate,
    request: {
      ...siteCreate.request,
      nulls: { summary: 'Every field, null where unset', value: { id: null, title: 'Shop DE', project_id: null, created_at: null } },
    },
  },
  getProjectSite: {
    summary: 'Read a site of a project',
    description: 'The site, when it belongs to the project in the path (404 otherwise).',
    responses: { 200: envelope('Sites', [site]) },
  },
  updateProjectSite: { summary: 'Update a site of a project', description: `${SITE_UPDATE} The site must belong to the project in the path.`, ...siteUpdate },
  deleteProjectSite: {
    summary: 'Delete a site of a project',
    description: `${SITE_DELETE} The site must belong to the project in the path.`,
    responses: deleted,
  },
  listSiteTags: {
    summary: 'List the tags of a site',
    description: 'Every tag of the site, its reference included (`readonly` is "1" for read-only tags).',
    responses: { 200: envelope('Tags', [{ id: '1', key: 'shop', value: 'de', readonly: '1' }, tag]) },
  },
  createSiteTag: { summary: 'Add a tag to a site', description: TAG_CREATE, ...tagCreate },
  getSiteTag: { summary: 'Read a tag of a site', description: 'One tag of the site.', responses: { 200: envelope('Tags', [tag]) } },
  updateSiteTag: { summary: 'Change a tag of a site', description: TAG_UPDATE, ...tagUpdate },
  deleteSiteTag: {
    summary: 'Delete a tag of a site',
    description: 'Deletes the tag and answers `{"success":true}`. A read-only tag and the site reference cannot be deleted (400).',
    responses: deleted,
  },
  createTag: {
    summary: 'Add a tag to the site named in the body',
    description: `${TAG_CREATE} The site is the body's \`site_id\` (required here).`,
    ...tagCreate,
    request: { tag: { value: { site_id: '1', key: 'country', value: 'de' } } },
  },
  getTag: { summary: 'Read a tag', description: `One tag of the account.${SITELESS}`, responses: { 200: envelope('Tags', [tag]) } },
  updateTag: { summary: 'Change a tag', description: `${TAG_UPDATE}${SITELESS}`, ...tagUpdate },
  deleteTag: { summary: 'Delete a tag', description: `Deletes the tag and answers \`{"success":true}\`.${SITELESS}`, responses: deleted },
}
