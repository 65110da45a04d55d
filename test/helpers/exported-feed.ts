import { expect } from 'vitest'
import type { FeedFormat } from '../../src/db/schema.js'
import { createChannel, readChannel } from './clients.js'
import { importFixture } from './factories.js'
import { feedPaths } from './responses.js'
import type { TestContext } from './test-app.js'

/**
 * A site of a new account whose stream holds `rows`, with one channel of `format` exported by a
 * run `all`: its full file's feed URL, and a second export after the stream changes.
 */
export async function exportedFeed(t: TestContext, { rows, format }: { rows: Record<string, string>[]; format: FeedFormat }) {
  const f = await importFixture(t)
  const stream = await f.createStream()
  await f.attach(stream)
  expect((await f.upload(stream, rows)).statusCode).toBe(202)
  const channel = await createChannel(f, { format })
  const exportAll = async () => {
    t.clock.advance(5_000)
    const run = await f.run('all')
    expect(run.status, run.message).toBe('success')
  }
  await exportAll()
  const [url] = feedPaths(await readChannel(f, channel.id))
  return { f, stream, url: url ?? '', exportAll }
}
