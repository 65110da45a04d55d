import { ScheduleError, checkScheduleSize, parseSchedule, type ScheduleLimits } from './site-schedule.js'
import type { SiteStatus } from '../db/schema.js'
import { BadRequestError } from '../errors.js'
import { bodyId, isId } from '../db/ids.js'
import { checkText, readText } from '../input/text-input.js'

export const SITE_STATUSES: readonly SiteStatus[] = ['active', 'paused_upload', 'disabled']

export interface SiteInput {
  id?: string | number | null
  title?: string | null
  reference?: string | null
  project_id?: string | number | null
  id_column?: string | null
  status?: string | null
  import_schedule?: string | null
  created_at?: string | null
}

/** The fields of a create or update that were given (null and absent both mean "not given"). */
export interface SiteChanges {
  title?: string
  projectId?: string
  idColumn?: string
  status?: SiteStatus
  importSchedule?: string
}

export function readSiteChanges(input: SiteInput, scheduleLimits: ScheduleLimits): SiteChanges {
  const changes: SiteChanges = {}
  const title = readText(input.title, 'title')
  if (title !== undefined) {
    if (title === '') throw new BadRequestError('title: must not be empty')
    changes.title = title
  }
  const projectId = bodyId(input.project_id)
  if (projectId !== undefined) {
    if (!isId(projectId)) throw new BadRequestError('project_id: must be a positive integer')
    changes.projectId = projectId
  }
  changes.idColumn = readText(input.id_column, 'id_column')
  if (input.status !== null && input.status !== undefined) {
    if (!SITE_STATUSES.includes(input.status as SiteStatus)) {
      throw new BadRequestError(`status: must be one of ${SITE_STATUSES.join(', ')}`)
    }
    changes.status = input.status as SiteStatus
  }
  if (input.import_schedule !== null && input.import_schedule !== undefined) {
    changes.importSchedule = checkSchedule(input.import_schedule, scheduleLimits)
  }
  return changes
}

/** The size is checked before anything splits or parses the text. */
export function checkSchedule(text: string, limits: ScheduleLimits): string {
  try {
    checkScheduleSize(text, limits)
    if (text.includes('\0')) throw new ScheduleError('must not contain NUL (\\u0000)')
    parseSchedule(text)
  } catch (error) {
    if (error instanceof ScheduleError) throw new BadRequestError(`import_schedule: ${error.message}`)
    throw error
  }
  return text.trim()
}

export interface Reference {
  key: string
  value: string
}

/** `<tagName>:<tagValue>`, split at the first colon; both parts non-empty. */
export function parseReference(text: string): Reference | undefined {
  const separator = text.indexOf(':')
  if (separator <= 0 || separator === text.length - 1) return undefined
  return { key: text.slice(0, separator), value: text.slice(separator + 1) }
}

export function readReference(input: SiteInput): Reference | undefined {
  if (input.reference === null || input.reference === undefined || input.reference === '') return undefined
  const reference = parseReference(checkText(input.reference.trim(), 'reference'))
  if (!reference) throw new BadRequestError('reference: must have the form <tagName>:<tagValue>')
  return reference
}
