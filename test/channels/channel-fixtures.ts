import { expect } from 'vitest'
import type { FeedFormat } from '../../src/db/schema.js'
import { newFeedToken } from '../../src/feeds/feed-urls.js'
import type { TestContext } from '../helpers/test-app.js'
import type { ImportFixture } from '../imports/import-fixtures.js'

export interface ChannelJson {
  id: string
  site_id: string
  channel_id: string
  name: string
  export_name: string
  active: boolean
  format: string
  mapping: Record<string, string>[]
  filter: string
  filename: string | null
  filenames: { type: string | null; filename: string }[]
  feed_destinations: Record<string, { destination_id: number; name: string | null; destination_name: string | null; active: boolean; urls: string[] }>
  links: Record<string, string>[]
}

export async function createChannel(f: ImportFixture, body: Record<string, unknown>): Promise<ChannelJson> {
  const response = await f.platform('POST', `/sites/${f.site.id}/channels`, { name: 'Google', export_name: 'google-shopping', ...body })
  expect(response.statusCode, response.body).toBe(201)
  const channel = response.json<{ Channels: ChannelJson[] }>().Channels[0]
  if (!channel) throw new Error('no channel in the response')
  return channel
}

export async function readChannel(f: ImportFixture, id: string): Promise<ChannelJson> {
  const response = await f.platform('GET', `/sites/${f.site.id}/channels/${id}`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ Channels: ChannelJson[] }>().Channels[0] as ChannelJson
}

/**
 * A channel as a version before the save rules could have stored it: written straight into the
 * database, with the built-in destination, so that only an export meets its settings.
 */
export async function insertLegacyChannel(t: TestContext, f: ImportFixture, settings: { format: FeedFormat; mapping?: unknown[]; filenames: unknown[] }): Promise<string> {
  const template = await t.db.insertInto('export_template').values({ account_id: f.account.accountId, name: `legacy-${Math.random().toString(36).slice(2, 10)}` }).returning('id').executeTakeFirstOrThrow()
  const channel = await t.db
    .insertInto('channel')
    .values({ account_id: f.account.accountId, site_id: f.site.id, template_id: template.id, name: 'Legacy', format: settings.format, mapping: JSON.stringify(settings.mapping ?? []), filenames: JSON.stringify(settings.filenames) })
    .returning('id')
    .executeTakeFirstOrThrow()
  await t.db.insertInto('channel_destination').values({ account_id: f.account.accountId, channel_id: channel.id, kind: 'feed', name: null, active: true, url: null, token: newFeedToken() }).execute()
  return channel.id
}

/** The built-in destination's URLs of a channel (one per exported file), as paths for inject. */
export function feedPaths(channel: ChannelJson): string[] {
  const feed = Object.values(channel.feed_destinations).find((d) => d.destination_id === 1)
  return (feed?.urls ?? []).map((url) => new URL(url).pathname)
}

export async function history(f: ImportFixture, id: string): Promise<Record<string, string>[]> {
  const response = await f.platform('GET', `/sites/${f.site.id}/channels/${id}/history`)
  expect(response.statusCode, response.body).toBe(200)
  return (response.json<{ Channels: (ChannelJson & { history: Record<string, string>[] })[] }>().Channels[0]?.history ?? [])
}

export async function download(t: TestContext, path: string, headers: Record<string, string> = {}) {
  return t.request({ method: 'GET', url: path, headers })
}

/** Polls `check` until it gives a value: delivery to http destinations follows the run. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let attempt = 0; attempt < 400; attempt++) {
    const value = await check()
    if (value !== undefined) return value
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}
