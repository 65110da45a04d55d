import { Type } from '@sinclair/typebox'
import type { Project, Site, SiteTag } from '../db/schema.js'
import { formatTimestamp, links } from './envelope.js'
import { Links, Timestamp } from './schemas.js'

// Response shapes of the platform interface (docs/interface.md section 2, docs/compatibility.md): ids as strings,
// timestamps as `YYYY-MM-DD HH:MM:SS`, links as arrays of one-key objects with absolute URLs.

export const ProjectOut = Type.Object({ id: Type.String(), name: Type.String(), created_at: Timestamp, links: Links })

export function projectView(project: Project, base: string) {
  return {
    id: project.id,
    name: project.name,
    created_at: formatTimestamp(project.created_at),
    links: links(base, { self: `/platform/v2/projects/${project.id}`, sites: `/platform/v2/projects/${project.id}/sites` }),
  }
}

export const SiteOut = Type.Object({
  id: Type.String(),
  title: Type.String(),
  project_id: Type.String(),
  status: Type.String(),
  import_schedule: Type.String(),
  id_column: Type.String(),
  processing_status: Type.String(),
  created_at: Timestamp,
  links: Links,
  availableProjectIds: Type.Array(Type.String()),
})

export function siteView(site: Site, base: string, availableProjectIds: string[]) {
  return {
    id: site.id,
    title: site.title,
    project_id: site.project_id,
    status: site.status,
    import_schedule: site.import_schedule,
    id_column: site.id_column,
    processing_status: site.processing_status,
    created_at: formatTimestamp(site.created_at),
    links: links(base, {
      self: `/platform/v2/sites/${site.id}`,
      tags: `/platform/v2/sites/${site.id}/tags`,
      project: `/platform/v2/projects/${site.project_id}`,
    }),
    availableProjectIds,
  }
}

export const TagOut = Type.Object({ id: Type.String(), key: Type.String(), value: Type.String(), readonly: Type.String() })

export function tagView(tag: SiteTag) {
  return { id: tag.id, key: tag.key, value: tag.value, readonly: tag.readonly ? '1' : '0' }
}
