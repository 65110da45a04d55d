import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { factories } from '../helpers/factories.js'
import { useTestApp } from '../helpers/test-app.js'
import { RawConnection, serverSettled, uploadHead, NO_BACKGROUND_TRANSACTIONS } from './raw-http.js'
import { expectBatch } from '../helpers/responses.js'
import { storedCounts } from './stored-rows.js'
import { streamClient } from '../helpers/clients.js'
import { listenOnFreePort } from '../helpers/listen.js'

// A body that trickles in holds a database connection for nothing: below UPLOAD_MIN_BYTES_PER_SECOND
// (judged after a short grace) the upload is cut off with a 408, well before the request deadline,
// and nothing is written.

const t = useTestApp({
  ...NO_BACKGROUND_TRANSACTIONS,
  UPLOAD_MIN_BYTES_PER_SECOND: '2000',
  STREAM_REQUEST_TIMEOUT_MS: '30000',
  RATE_LIMIT_PRODUCTS: '1000',
  RATE_LIMIT_OTHER: '1000',
})
const given = factories(t)
let port = 0

beforeAll(async () => {
  port = await listenOnFreePort(t.app)
})

afterAll(async () => {
  await t.app?.close()
})

describe('UPLOAD_MIN_BYTES_PER_SECOND', () => {
  it('cuts off a body that trickles in with a 408 and stores nothing', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    expectBatch(await c.upload(stream.id, '{"id":"seed"}\n'))
    const connection = await RawConnection.open(port)
    let writing = true
    try {
      await connection.write(uploadHead(stream.id, c.account.token, 100_000))
      // 20 bytes every 100 ms: 200 bytes per second, a tenth of the minimum.
      const trickle = (async () => {
        for (let i = 0; writing && i < 300; i++) {
          await connection.write(`{"id":"t${String(i).padStart(5, '0')}"}\n`.padEnd(20, ' '))
          await sleep(100)
        }
      })()
      const response = await connection.response(20_000)
      writing = false
      await trickle
      expect(response.statusCode, response.body).toBe(408)
      expect(JSON.parse(response.body)).toMatchObject({
        errors: [{ status: '408', title: 'Request Timeout', detail: expect.stringMatching(/2000 bytes per second/) as unknown }],
      })
    } finally {
      writing = false
      connection.destroy()
    }
    await serverSettled(t)
    expect(await storedCounts(t, stream.id)).toEqual({ batches: 1, rows: 1, payloadChunks: 0 })
  })

  it('keeps a body that arrives fast, even when the upload itself takes a while', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const rows = Array.from({ length: 20_000 }, (_, i) => `{"id":"r${i}","title":"${'x'.repeat(100)}"}`).join('\n')
    const batch = expectBatch(await c.upload(stream.id, rows))
    expect(batch.attributes.stages.upload).toMatchObject({ successCount: 20_000, errorCount: 0 })
  })
})
