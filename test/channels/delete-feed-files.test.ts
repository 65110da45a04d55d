import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deleteChannel } from '../../src/channels/channels.js'
import type { FeedStorage } from '../../src/feeds/feed-storage.js'
import { deleteSite } from '../../src/sites/sites.js'
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js'

// A delete removes its feed files in an after-commit hook: only once no committed row names them,
// and never for a delete that did not happen.

let database: TestDatabase
let accountId: string
let templates = 0

/** A storage that only records what it is asked to remove, and whether the rows were gone by then. */
function recordingStorage(): FeedStorage & { removed: { keys: readonly string[]; channelsLeft: number }[] } {
  const removed: { keys: readonly string[]; channelsLeft: number }[] = []
  return {
    removed,
    create: () => Promise.reject(new Error('not used')),
    open: () => Promise.resolve(undefined),
    removePrefix: () => Promise.resolve(),
    async remove(keys) {
      // Read on another connection: it sees only what was committed.
      const { n } = await database.db
        .selectFrom('channel')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow()
      removed.push({ keys, channelsLeft: Number(n) })
    },
  }
}

async function siteWithChannel(): Promise<{ siteId: string; channelId: string; keys: string[] }> {
  const { db } = database
  const project = await db.insertInto('project').values({ account_id: accountId, name: 'p' }).returning('id').executeTakeFirstOrThrow()
  const site = await db.insertInto('site').values({ account_id: accountId, project_id: project.id, title: 's' }).returning('id').executeTakeFirstOrThrow()
  const template = await db
    .insertInto('export_template')
    .values({ account_id: accountId, name: `template ${++templates}` })
    .returning('id')
    .executeTakeFirstOrThrow()
  const channel = await db
    .insertInto('channel')
    .values({ account_id: accountId, site_id: site.id, template_id: template.id, name: 'c', format: 'csv', mapping: '[]', filenames: '[]' })
    .returning('id')
    .executeTakeFirstOrThrow()
  const keys = [`${channel.id}/run-1/a.csv`, `${channel.id}/run-1/b.csv`]
  await db
    .insertInto('feed_file')
    .values(
      keys.map((key, position) => ({
        account_id: accountId,
        channel_id: channel.id,
        position,
        filename: key.split('/').at(-1) ?? '',
        storage_key: key,
        content_type: 'text/csv; charset=utf-8',
        bytes: 1,
        etag: '"e"',
        written_at: new Date(),
      })),
    )
    .execute()
  return { siteId: site.id, channelId: channel.id, keys }
}

const channelCount = async () =>
  Number(
    (
      await database.db
        .selectFrom('channel')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

beforeAll(async () => {
  database = await createTestDatabase()
  accountId = (await database.db.insertInto('account').values({ name: 'deletes' }).returning('id').executeTakeFirstOrThrow()).id
})
afterAll(() => database?.drop())

/** No run queue here: the sites deleted have no runs. */
const NO_RUNS = { accountConcurrency: 1, wake: () => {} }

describe('deleting a channel or a site', () => {
  it('removes the channel files after the commit', async () => {
    const { siteId, channelId, keys } = await siteWithChannel()
    const before = await channelCount()
    const storage = recordingStorage()
    await deleteChannel(database.db, storage, accountId, siteId, channelId)
    expect(storage.removed).toEqual([{ keys, channelsLeft: before - 1 }])
  })

  it('removes the files of every channel of a deleted site after the commit', async () => {
    const { siteId, keys } = await siteWithChannel()
    const before = await channelCount()
    const storage = recordingStorage()
    await deleteSite(database.db, { storage, runs: NO_RUNS, accountId, segment: siteId })
    expect(storage.removed).toEqual([{ keys: expect.arrayContaining(keys), channelsLeft: before - 1 }])
  })

  it('removes nothing when the delete fails', async () => {
    const { siteId, channelId } = await siteWithChannel()
    const storage = recordingStorage()
    await expect(deleteChannel(database.db, storage, accountId, siteId, '999999')).rejects.toThrow()
    await expect(deleteSite(database.db, { storage, runs: NO_RUNS, accountId, segment: siteId, pathProjectId: '999999' })).rejects.toThrow()
    expect(storage.removed).toEqual([])
    expect(await database.db.selectFrom('channel').select('id').where('id', '=', channelId).executeTakeFirst()).toBeDefined()
  })
})
