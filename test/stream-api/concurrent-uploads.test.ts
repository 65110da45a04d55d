import pg from 'pg'
import { beforeAll, describe, expect, it } from 'vitest'
import { factories } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { RawConnection, openTransactions, uploadHead, NO_BACKGROUND_TRANSACTIONS } from './raw-http.js'
import { eventually } from '../helpers/eventually.js'
import { JSON_BODY, NDJSON, ndjson, streamClient } from '../helpers/clients.js'
import { listenOnFreePort } from '../helpers/listen.js'

const t = useTestApp({ ...HIGH_LIMITS, ...NO_BACKGROUND_TRANSACTIONS })
const given = factories(t)
let port = 0

beforeAll(async () => {
  port = await listenOnFreePort(t.app)
})

// Two uploads overlap deterministically: the first, its body received whole, is held inside its
// COPY by a lock the test holds (its transaction is seen in the database), the second runs to the
// end or waits for the first, then the lock is let go.
describe('overlapping uploads', () => {
  it('keep the content type of a referenced stream: the second type is refused even while the first upload runs', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account, type: 'referenced' })
    const body = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ id: `SKU-${i}`, title: `Product ${i}` })))
    const connection = await RawConnection.open(port)
    const locker = new pg.Client({ connectionString: t.database.url })
    await locker.connect()
    const statuses: number[] = []
    try {
      await locker.query('BEGIN')
      await locker.query('LOCK TABLE batch_payload IN SHARE MODE')
      await connection.write(uploadHead(stream.id, c.account.token, Buffer.byteLength(body), 'application/json'))
      await connection.write(body)
      await eventually(async () => (await openTransactions(t)).some((tx) => tx.query.includes('COPY batch_payload')), 'the JSON upload to be writing')

      // The second upload either finishes, or waits for the first (a lock): both are fine.
      let finished = false
      const ndjsonUpload = c.upload(stream.id, ndjson([{ id: 'other' }]), NDJSON).finally(() => {
        finished = true
      })
      await eventually(
        async () => finished || (await openTransactions(t)).filter((tx) => tx.waitEventType === 'Lock').length >= 2,
        'the NDJSON upload to finish or to wait for the JSON upload',
      )

      await locker.query('COMMIT')
      const jsonUpload = await connection.response()
      statuses.push(jsonUpload.statusCode, (await ndjsonUpload).statusCode)
    } finally {
      connection.destroy()
      await locker.end()
    }
    // One of the two may win, but not both: a stream's batches all have one content type.
    expect(statuses.sort((x, y) => x - y)).toEqual([202, 415])
    const types = await t.db.selectFrom('batch').select('content_type').distinct().where('stream_id', '=', stream.id).execute()
    expect(types).toHaveLength(1)

    const later = await c.upload(stream.id, '[{"id":"x"}]', JSON_BODY)
    const laterNdjson = await c.upload(stream.id, '{"id":"x"}\n', NDJSON)
    expect([later.statusCode, laterNdjson.statusCode].sort((x, y) => x - y)).toEqual([202, 415])
  })
})
