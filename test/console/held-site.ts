import { expect } from 'vitest'
import { createChannel, download, readChannel } from '../helpers/clients.js'
import type { ImportFixture } from '../helpers/factories.js'
import { feedPaths, type ChannelJson } from '../helpers/responses.js'
import type { TestContext } from '../helpers/test-app.js'

// A site whose channel a safety stop holds (issue 31), as test/exports/safety-stops.test.ts makes one:
// 200 products exported through a generic CSV channel, 150 of them deleted through the stream
// interface, a run again: the run succeeds, the channel is held at 50 products against 200 delivered.

export const productIds = (count: number, from = 0) => Array.from({ length: count }, (_, i) => `P${String(from + i).padStart(4, '0')}`)

export interface HeldSite {
  stream: string
  channel: ChannelJson
  /** The run whose export was held. */
  held: { pid: string; status: string; message: string }
}

/**
 * `rows` (200 products by default) uploaded and exported through a generic CSV channel, then all but
 * the last 50 deleted and run again. Other channels created before (`before`) export alongside.
 */
export async function heldSite(f: ImportFixture, rows?: Record<string, string>[], before?: () => Promise<unknown>): Promise<HeldSite> {
  const stream = await f.createStream()
  await f.attach(stream)
  const products = rows ?? productIds(200).map((id) => ({ id, title: `Shirt ${id}`, price: '19.99' }))
  expect((await f.upload(stream, products)).statusCode).toBe(202)
  const channel = await createChannel(f, { name: 'CSV all', export_name: 'generic', format: 'csv', filenames: [{ type: null, filename: 'all.csv' }] })
  await before?.()
  const first = await f.run('all')
  expect(first.status, first.message).toBe('success')
  expect(
    (
      await f.deleteProducts(
        stream,
        products.slice(0, products.length - 50).map((row) => row.id ?? ''),
      )
    ).statusCode,
  ).toBe(202)
  const held = await f.run('all')
  expect(held.status, held.message).toBe('success')
  expect((await readChannel(f, channel.id)).export_status).toBe('held')
  return { stream, channel, held }
}

/** The rows of the channel's full feed file as served (its header line left out). */
export async function servedRows(t: TestContext, f: ImportFixture, channelId: string): Promise<number> {
  const [path] = feedPaths(await readChannel(f, channelId))
  const response = await download(t, path ?? '/none')
  expect(response.statusCode, path).toBe(200)
  return response.body.split('\n').filter((line) => line !== '').length - 1
}

/** The page's text without tags, whitespace collapsed: what a reader sees, in order. */
export function textOf(body: string): string {
  return body
    .replace(/<[^>]*>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/\s+/g, ' ')
}

/** An attribute's value as HTML escaped it, read back. */
export function unescapeAttribute(value: string): string {
  return value
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
}

/** The HTML of the element with `attribute` (an exact attribute text), up to its closing `tag`. */
export function elementWith(body: string, attribute: string, tag = 'section'): string {
  const start = body.lastIndexOf(`<${tag}`, body.indexOf(attribute))
  if (body.indexOf(attribute) < 0 || start < 0) return ''
  return body.slice(start, body.indexOf(`</${tag}>`, start) + tag.length + 3)
}
