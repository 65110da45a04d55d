import { lockAccountCreates, requireRoom, type AccountLimits } from '../accounts/object-limits.js'
import type { Db, DbHandle } from '../db/database.js'
import { inTransaction } from '../db/transaction.js'
import type { Project } from '../db/schema.js'
import { BadRequestError, NotFoundError } from '../errors.js'
import { bodyId, isId } from '../db/ids.js'
import { readText } from '../input/text-input.js'
import { changesBetween } from '../activity/activity-changes.js'
import { recordActivity } from '../activity/activity-store.js'
import { settleRequestClaim } from '../activity/request-scope.js'

export interface ProjectInput {
  id?: string | number | null
  name?: string | null
  created_at?: string | null
}

export async function listProjects(db: DbHandle, accountId: string): Promise<Project[]> {
  return db.selectFrom('project').selectAll().where('account_id', '=', accountId).orderBy('id').execute()
}

/** The project; `forUpdate`: its row locked until the transaction ends, for a change that reads it and then writes it (see getChannel). */
export async function getProject(db: DbHandle, accountId: string, projectId: string, { forUpdate = false } = {}): Promise<Project> {
  let query = db.selectFrom('project').selectAll().where('account_id', '=', accountId).where('id', '=', projectId)
  if (forUpdate) query = query.forNoKeyUpdate()
  const project = isId(projectId) ? await query.executeTakeFirst() : undefined
  if (!project) throw new NotFoundError()
  return project
}

export async function createProject(db: Db, accountId: string, input: ProjectInput, limits: AccountLimits): Promise<Project> {
  if (bodyId(input.id) !== undefined) throw new BadRequestError('id: must be empty on create')
  if (input.created_at) throw new BadRequestError('created_at: must be empty on create')
  const name = requireName(input.name)
  return inTransaction(db, async (tx) => {
    const trx = tx.db
    await lockAccountCreates(trx, accountId)
    await requireRoom(trx, accountId, limits, { projects: 1 })
    const project = await trx.insertInto('project').values({ account_id: accountId, name }).returningAll().executeTakeFirstOrThrow()
    await recordActivity(trx, { accountId, action: 'project.created', target: projectTarget(project), changes: changesBetween(null, project) })
    await settleRequestClaim(tx, project)
    return project
  })
}

function projectTarget(project: Project) {
  return { type: 'project', id: project.id }
}

export async function updateProject(db: Db, accountId: string, projectId: string, input: ProjectInput): Promise<Project> {
  return inTransaction(db, async ({ db: trx }) => {
    const project = await getProject(trx, accountId, projectId, { forUpdate: true })
    const givenId = bodyId(input.id)
    if (givenId !== undefined && givenId !== project.id) {
      throw new BadRequestError(`id: must match the project in the path (${project.id})`)
    }
    if (input.name === null || input.name === undefined) return project
    const updated = await trx
      .updateTable('project')
      .set({ name: requireName(input.name) })
      .where('account_id', '=', accountId)
      .where('id', '=', project.id)
      .returningAll()
      .executeTakeFirstOrThrow()
    const changes = changesBetween(project, updated)
    if (Object.keys(changes).length > 0) await recordActivity(trx, { accountId, action: 'project.updated', target: projectTarget(updated), changes })
    return updated
  })
}

export async function deleteProject(db: Db, accountId: string, projectId: string): Promise<void> {
  await inTransaction(db, async ({ db: trx }) => {
    const project = await getProject(trx, accountId, projectId, { forUpdate: true })
    const site = await trx.selectFrom('site').select('id').where('account_id', '=', accountId).where('project_id', '=', project.id).limit(1).executeTakeFirst()
    if (site) throw new BadRequestError(`Project ${project.id} still has sites; delete or move them first`)
    await trx.deleteFrom('project').where('account_id', '=', accountId).where('id', '=', project.id).execute()
    await recordActivity(trx, { accountId, action: 'project.deleted', target: projectTarget(project), changes: changesBetween(project, null) })
  })
}

/** Ids of every project of the account, as sites show them in `availableProjectIds`. */
export async function projectIds(db: DbHandle, accountId: string): Promise<string[]> {
  const rows = await db.selectFrom('project').select('id').where('account_id', '=', accountId).orderBy('id').execute()
  return rows.map((r) => r.id)
}

function requireName(name: string | null | undefined): string {
  const trimmed = readText(name, 'name') ?? ''
  if (trimmed === '') throw new BadRequestError('name: is required and must not be empty')
  return trimmed
}
