import { sql } from 'kysely'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { createChannel, download, readChannel } from '../helpers/clients.js'
import { eventually } from '../helpers/eventually.js'
import { importFixture } from '../helpers/factories.js'
import { feedPaths } from '../helpers/responses.js'
import { useTestApp } from '../helpers/test-app.js'

// A release is one transaction, as every export (issue 31): a release whose connection dies after
// it has rewritten the channel's stage, while it waits to make the new files the channel's, leaves
// the old file served byte for byte and the hold in place; the next release publishes.

const t = useTestApp({ RUN_POLL_SECONDS: '0.5' })
const ids = (count: number) => Array.from({ length: count }, (_, i) => `P${String(i).padStart(4, '0')}`)

describe('a release that dies half-way', () => {
  it('leaves the old file and the hold; released again, the new file', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    await f.upload(
      stream,
      ids(200).map((id) => ({ id, title: `Shirt ${id}` })),
    )
    const channel = await createChannel(f, { export_name: 'generic', format: 'csv' })
    await f.run('all')
    const [path] = feedPaths(await readChannel(f, channel.id))
    const before = await download(t, path ?? '')
    await f.deleteProducts(stream, ids(150))
    await f.run('all')
    expect((await readChannel(f, channel.id)).export_status).toBe('held')

    // The release rewrites the stage, then waits to replace the channel's feed_file rows: its backend is ended there.
    const holder = new pg.Client({ connectionString: t.database.url })
    await holder.connect()
    await holder.query('BEGIN')
    await holder.query('SELECT id FROM feed_file WHERE channel_id = $1 FOR UPDATE', [channel.id])
    let releasing: ReturnType<typeof f.c.post> | undefined
    try {
      releasing = f.c.post(`/sites/${f.site.id}/channels/${channel.id}/release`, {})
      const pid = await eventually(async () => {
        const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'delete from "feed_file"%'`.execute(t.db)
        return rows[0]?.pid
      }, "the release to wait for the channel's feed_file rows")
      const stage = await sql<{ n: string }>`SELECT count(*) AS n FROM stage_product WHERE stage = 'channel' AND stage_id = ${channel.id}`.execute(t.db)
      // Its own rewrite of the stage (150 rows fewer) is not visible outside it.
      expect(stage.rows[0]?.n).toBe('200')
      await sql`SELECT pg_terminate_backend(${pid})`.execute(t.db)
    } finally {
      await holder.query('ROLLBACK')
      await holder.end()
    }
    const died = await releasing
    expect(died?.statusCode, died?.body).toBe(500)
    expect(died?.json()).toEqual({ success: false, message: 'Internal Server Error' })

    const after = await download(t, path ?? '')
    expect([after.body, after.headers.etag]).toEqual([before.body, before.headers.etag])
    expect((await readChannel(f, channel.id)).export_status).toBe('held')

    const released = await f.c.post(`/sites/${f.site.id}/channels/${channel.id}/release`, {})
    expect(released.statusCode, released.body).toBe(200)
    const [now] = feedPaths(await readChannel(f, channel.id))
    expect((await download(t, now ?? '')).body.split('\n').filter((line) => line !== '')).toHaveLength(51)
  })
})
