import { gzipSync } from 'node:zlib'
import { beforeAll, describe, expect, it } from 'vitest'
import { factories } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { bodyBeingReceived, RawConnection, serverSettled, spoolUsage, uploadHead, NO_BACKGROUND_TRANSACTIONS } from './raw-http.js'
import { eventually } from '../helpers/eventually.js'
import { expectBatch } from '../helpers/responses.js'
import { expectNothingStored, storedCounts } from './stored-rows.js'
import { streamClient } from '../helpers/clients.js'
import { listenOnFreePort } from '../helpers/listen.js'

const t = useTestApp({ ...HIGH_LIMITS, ...NO_BACKGROUND_TRANSACTIONS })
const given = factories(t)
let port = 0

beforeAll(async () => {
  port = await listenOnFreePort(t.app)
})

const TEN_MB = 10 * 1024 * 1024

/** About `bytes` of valid NDJSON rows. */
function validLines(bytes: number): string {
  const lines: string[] = []
  let size = 0
  for (let i = 0; size < bytes; i++) {
    const line = `{"id":"SKU-${i}","title":"Product ${i}","description":"${'d'.repeat(60)}"}\n`
    lines.push(line)
    size += line.length
  }
  return lines.join('')
}

/**
 * Waits until the server has received part of the body: it is spooled, and no transaction is open
 * for it (an upload takes a connection only once its body is complete).
 */
async function uploadInProgress(): Promise<void> {
  await bodyBeingReceived(t)
}

/** Nothing of a cut-off upload is left: no transaction, no rows, and its spooled bytes given back. */
async function nothingLeft(c: Awaited<ReturnType<typeof streamClient>>, streamId: string): Promise<void> {
  await serverSettled(t)
  await expectNothingStored(t, c, streamId)
  await eventually(async () => (await spoolUsage(t.app)).bytes === 0, 'the spool to give the cut-off body back')
}

describe('a cut-off upload leaves nothing behind', () => {
  it.each([
    ['chunked', 'application/x-ndjson', 1024 * 1024],
    ['referenced', 'application/x-ndjson', 3 * 1024 * 1024],
    ['referenced', 'application/json', 3 * 1024 * 1024],
  ])('%s stream, %s body', async (type, contentType, sentBytes) => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account, type: type })
    const partial = contentType === 'application/json' ? `[${validLines(sentBytes).trim().split('\n').join(',')},` : validLines(sentBytes)
    const connection = await RawConnection.open(port)
    try {
      await connection.write(uploadHead(stream.id, c.account.token, TEN_MB, contentType))
      await connection.write(partial)
      await uploadInProgress()
    } finally {
      connection.destroy()
    }
    await nothingLeft(c, stream.id)

    // The stream takes the next upload as if nothing had happened.
    const batch = expectBatch(await c.upload(stream.id, '{"id":"after"}\n'))
    expect((await c.batches(stream.id)).map((b) => b.id)).toEqual([batch.id])
  })

  it('a gzip body cut off mid-way leaves nothing behind', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const gz = gzipSync(validLines(4 * 1024 * 1024), { level: 1 })
    const connection = await RawConnection.open(port)
    try {
      const head = uploadHead(stream.id, c.account.token, gz.length).replace('\r\n\r\n', '\r\nContent-Encoding: gzip\r\n\r\n')
      await connection.write(head)
      await connection.write(gz.subarray(0, Math.floor(gz.length / 2)))
      await uploadInProgress()
    } finally {
      connection.destroy()
    }
    await nothingLeft(c, stream.id)
  })

  it('the same upload sent in full over a socket is stored (the procedure above can see a batch)', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const body = validLines(1024 * 1024)
    const count = body.split('\n').length - 1
    const connection = await RawConnection.open(port)
    try {
      await connection.write(uploadHead(stream.id, c.account.token, Buffer.byteLength(body)))
      await connection.write(body)
      const response = await connection.response()
      expect(response.statusCode, response.body).toBe(202)
      expect(response.headers['content-type']).toMatch(/^application\/vnd\.api\+json/)
    } finally {
      connection.destroy()
    }
    await serverSettled(t)
    const batches = await c.batches(stream.id)
    expect(batches).toHaveLength(1)
    expect(batches[0]?.attributes.stages.upload).toMatchObject({ status: 'success', successCount: count })
    expect(await storedCounts(t, stream.id)).toEqual({ batches: 1, rows: count, payloadChunks: 0 })
  })
})
