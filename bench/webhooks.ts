// Webhook delivery latency (issue 15): small uploads one after another to a stream whose account
// subscribes to `batch.uploaded` at a receiver on 127.0.0.1; for each, the time from sending the
// upload to its 202 (the baseline: what the client waits anyway) and to the signed POST reaching the
// receiver. The compiled server as a child process on the embedded Postgres.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import fs from 'node:fs/promises'
import path from 'node:path'
import { benchDatabase, createBenchSite, machineLine, percentile, startServerProcess, writeResult } from './support.js'

const UPLOADS = 300
const ROWS = 10

const database = await benchDatabase()
const server = await startServerProcess(database.url, {
  WEBHOOK_ALLOW_HTTP: 'true',
  ALLOW_PRIVATE_DESTINATIONS: 'true',
  RATE_LIMIT_PRODUCTS: '1000000',
})
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-webhooks-'))
const site = await createBenchSite(database, server, dir)

// The receiver notes when each batch's event arrived.
const arrived = new Map<string, number>()
const receiver = createServer((request, response) => {
  let body = ''
  request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')))
  request.on('end', () => {
    const event = JSON.parse(body) as { data: { batch_id: string } }
    arrived.set(event.data.batch_id, performance.now())
    response.end('ok')
  })
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`
await site.call('POST', '/platform/v2/webhooks', site.platform, JSON.stringify({ url, events: ['batch.uploaded'] }))

const headers = { ...site.bearer, 'content-type': 'application/x-ndjson' }
const uploadMs: number[] = []
const deliveryMs: number[] = []
for (let i = 0; i < UPLOADS; i++) {
  const body = Array.from({ length: ROWS }, (_, k) => JSON.stringify({ id: `p-${i}-${k}`, title: `Product ${k}` })).join('\n')
  const started = performance.now()
  const response = (await site.call('POST', `/streams/${site.streamId}/products`, headers, body)) as { data: { id: string } }
  uploadMs.push(performance.now() - started)
  const batchId = response.data.id
  for (let wait = 0; !arrived.has(batchId); wait++) {
    if (wait > 10_000) throw new Error(`no event for batch ${batchId}`)
    await new Promise((resolve) => setImmediate(resolve))
  }
  deliveryMs.push((arrived.get(batchId) ?? 0) - started)
}

await server.stop()
receiver.close()
await database.close()
await fs.rm(dir, { recursive: true, force: true })

const row = (label: string, times: number[]) =>
  `| ${label} | ${percentile(times, 0.5).toFixed(1)} | ${percentile(times, 0.9).toFixed(1)} | ${percentile(times, 0.99).toFixed(1)} |`
const lines = [
  '# Webhook delivery benchmark',
  '',
  `Run with \`npm run bench:webhooks\` on ${new Date().toISOString().slice(0, 10)}: ${machineLine()}. Embedded Postgres (durable settings), the compiled server as a child process.`,
  `${UPLOADS} uploads of ${ROWS} rows, one after another, to a stream whose account subscribes to \`batch.uploaded\` at a receiver on 127.0.0.1.`,
  '',
  '| from sending the upload to | p50 ms | p90 ms | p99 ms |',
  '|---|---:|---:|---:|',
  row('its 202 (baseline)', uploadMs),
  row('the signed event at the receiver', deliveryMs),
  '',
  `The event arrives ${(percentile(deliveryMs, 0.5) - percentile(uploadMs, 0.5)).toFixed(1)} ms after the 202 at p50 (ratio ${(percentile(deliveryMs, 0.5) / percentile(uploadMs, 0.5)).toFixed(2)}): the process that committed the upload wakes its delivery worker on commit. An event committed by another process is picked up at its next poll (WEBHOOK_POLL_SECONDS, 2 s).`,
]
console.log(lines.join('\n'))
await writeResult('webhooks.md', lines.join('\n'))
