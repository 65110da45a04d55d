import { describe, expect, it } from 'vitest'
import { streamClient } from '../helpers/clients.js'
import { factories } from '../helpers/factories.js'
import { captureLog, LEVEL } from '../helpers/log-capture.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'

// Every upload's batch is a line at info (the default level), on the request's logger: what the
// client sent wrong is in the batch for the client to read, and the operator sees the counts.
const log = captureLog('info')
const t = useTestApp(HIGH_LIMITS, { logger: log.options })
const given = factories(t)

function uploadLine(batch: string) {
  return log.line(`the line of batch ${batch}`, (line) => line.batch === batch)
}

describe('the upload log', () => {
  it('logs a batch with bad lines: its status, the counts of its upload stage and the bytes, with the request id', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const body = '{"id":"SKU1","title":"Shirt"}\n{"title":"no id"}\nnot json\n'
    const response = await c.upload(stream.id, body)
    expect(response.statusCode, response.body).toBe(202)
    const batch = response.json<{ data: { id: string } }>().data.id

    expect(await uploadLine(batch)).toMatchObject({
      level: LEVEL.info,
      msg: 'batch uploaded',
      account: c.account.accountId,
      stream: stream.id,
      batch,
      kind: 'upsert',
      status: 'uploaded',
      stage: 'warning',
      successCount: 1,
      errorCount: 2,
      bytes: Buffer.byteLength(body),
      statusCode: 202,
      reqId: expect.any(String),
    })
  })

  it('logs a batch whose every line failed, and a delete of one product, at info too', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const refused = await c.upload(stream.id, '{"title":"no id"}\n{"title":"none either"}\n')
    expect(refused.statusCode, refused.body).toBe(202)
    const failed = refused.json<{ data: { id: string } }>().data.id
    expect(await uploadLine(failed)).toMatchObject({ level: LEVEL.info, status: 'failed', stage: 'failure', successCount: 0, errorCount: 2 })

    const deleted = await c.send('DELETE', `/streams/${stream.id}/products/SKU1`)
    expect(deleted.statusCode, deleted.body).toBe(202)
    const batch = deleted.json<{ data: { id: string } }>().data.id
    expect(await uploadLine(batch)).toMatchObject({ level: LEVEL.info, msg: 'batch uploaded', kind: 'delete', status: 'uploaded', bytes: 0, statusCode: 202 })
  })

  it('logs an empty payload, which stores no batch, as refused', async () => {
    const c = await streamClient(t)
    const stream = await given.stream({ account: c.account })
    const response = await c.upload(stream.id, '')
    expect(response.statusCode, response.body).toBe(422)
    const batch = response.json<{ data: { id: string } }>().data.id
    expect(await uploadLine(batch)).toMatchObject({
      level: LEVEL.info,
      msg: 'upload refused: empty payload',
      account: c.account.accountId,
      stream: stream.id,
      status: 'failed',
      errorCount: 1,
      bytes: 0,
      statusCode: 422,
    })
  })
})
