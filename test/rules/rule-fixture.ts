import { expect } from 'vitest'
import { createChannel, download, readChannel } from '../helpers/clients.js'
import type { ImportFixture } from '../helpers/factories.js'
import { feedPaths } from '../helpers/responses.js'
import type { TestContext } from '../helpers/test-app.js'
import { parse as parseCsv } from 'csv-parse/sync'
import { readStage, type Format, type Row } from '../exports/feed-rows.js'

// What the rule tests do through the platform interface: rules of a site or a channel, their
// preview, and the files and stages a run leaves.

export type { Row }

export interface RuleJson {
  id: string
  position: number
  enabled: boolean
  attribute: string | null
  summary: string
  if: unknown
  then: unknown[]
  else: unknown[]
}

export interface StepJson {
  rule_id: string
  matched: boolean
  attribute: string | null
  before: string | null
  after: string | null
  excluded: boolean
}

export interface PreviewProductJson {
  id: string
  before: Row
  after: Row | null
  excluded: boolean
  steps: StepJson[]
  checks?: { before: ChecksJson; after: ChecksJson | null }
  line?: string | null
}

export interface ChecksJson {
  in_feed: boolean
  issues: { code: string; severity: string; attribute: string }[]
  notes: { code: string; attribute: string }[]
}

export interface PreviewJson {
  scope: 'site' | 'channel'
  columns: string[]
  products: PreviewProductJson[]
  summary: {
    products: number
    changed: number
    excluded: number
    rules: { rule_id: string; matched: number }[]
    readiness?: number | null
    exported?: number
    left_out?: number
    saved?: { readiness: number | null; exported: number } | null
  } | null
}

/** The rules path of a site (no channel) or of one of its channels. */
export function rulesPath(f: ImportFixture, channelId?: string): string {
  return channelId === undefined ? `/sites/${f.site.id}/rules` : `/sites/${f.site.id}/channels/${channelId}/rules`
}

export async function addRule(f: ImportFixture, body: Record<string, unknown>, channelId?: string): Promise<RuleJson> {
  const response = await f.c.post(rulesPath(f, channelId), body)
  expect(response.statusCode, response.body).toBe(201)
  return response.json<{ Rules: RuleJson[] }>().Rules[0] as RuleJson
}

export async function listRules(f: ImportFixture, channelId?: string): Promise<RuleJson[]> {
  const response = await f.c.get(rulesPath(f, channelId))
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ Rules: RuleJson[] }>().Rules
}

export async function preview(f: ImportFixture, body: Record<string, unknown>, channelId?: string): Promise<PreviewJson> {
  const response = await f.c.post(`${rulesPath(f, channelId)}/preview`, body)
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ Previews: PreviewJson[] }>().Previews[0] as PreviewJson
}

/** A site with one stream whose rows are `rows`, imported. */
export async function importedSite(f: ImportFixture, rows: Row[]): Promise<string> {
  const streamId = await f.createStream()
  await f.attach(streamId)
  const upload = await f.upload(streamId, rows)
  expect(upload.statusCode, upload.body).toBe(202)
  const run = await f.run('import')
  expect(run.status, run.message).toBe('success')
  return streamId
}

/** A channel over the intermediate stage as it is (no mapping unless given), one full file in `format`. */
export async function plainChannel(f: ImportFixture, format: Format, body: Record<string, unknown> = {}): Promise<string> {
  const created = await createChannel(f, {
    name: `Feed ${format}`,
    export_name: `plain-${format}`,
    format,
    filenames: [{ type: null, filename: `feed-{channel_id}.${format}` }],
    ...body,
  })
  return created.id
}

/** The channel's full file: its text and, for ndjson and csv, its rows. */
export async function feedOf(t: TestContext, f: ImportFixture, channelId: string): Promise<{ text: string; rows: Row[] }> {
  const channel = await readChannel(f, channelId)
  const [path] = feedPaths(channel)
  const response = await download(t, path ?? '')
  expect(response.statusCode, path).toBe(200)
  const text = response.body
  if (channel.format === 'ndjson')
    return {
      text,
      rows:
        text === ''
          ? []
          : text
              .replace(/\n$/, '')
              .split('\n')
              .map((line) => JSON.parse(line) as Row),
    }
  if (channel.format === 'csv') return { text, rows: parseCsv(text, { columns: true }) as Row[] }
  return { text, rows: [] }
}

export { readStage }
