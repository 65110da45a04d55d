import { expect } from 'vitest'
import type { ImportFixture } from '../helpers/factories.js'
import { createChannel, download, readChannel } from '../helpers/clients.js'
import { feedPaths, type ChannelJson } from '../helpers/responses.js'
import type { TestContext } from '../helpers/test-app.js'

// What the template tests read back through the platform interface: a channel's diagnostics, its
// summary and its files.

export type Row = Record<string, string>

/** A product Google Shopping takes as it is (price a bare number: the channel's currency is added). */
export function goodProduct(id: string, overrides: Row = {}): Row {
  return {
    id,
    title: `Shirt ${id}`,
    description: 'A soft cotton shirt',
    link: `https://shop.example.com/p/${id}`,
    image_link: `https://cdn.example.com/${id}.jpg`,
    availability: 'in_stock',
    price: '19.9',
    condition: 'new',
    brand: 'Acme',
    gtin: '4006381333931',
    google_product_category: '1604',
    ...overrides,
  }
}

export interface Diagnostic {
  id: string
  attribute: string
  code: string
  severity: string
  message: string
  value: string
  hint: string
}

export interface Summary {
  products_checked: number
  products_exported: number
  products_left_out: number
  products_exported_with_warnings: number
  products_with_errors: number
  products_with_warnings: number
  readiness_score: number | null
  by_severity: Record<string, number>
  by_code: { code: string; count: number; severity: string; attribute: string }[]
  exported_at: string | null
  pid: string | null
  channel_id: string
  links: unknown
}

export async function diagnostics(f: ImportFixture, channelId: string, query = ''): Promise<{ entries: Diagnostic[]; total: number }> {
  const response = await f.c.get(`/sites/${f.site.id}/channels/${channelId}/diagnostics?limit=1000${query}`)
  expect(response.statusCode, response.body).toBe(200)
  const body = response.json<{ Diagnostics: Diagnostic[]; meta: { total: number } }>()
  return { entries: body.Diagnostics, total: body.meta.total }
}

export async function summary(f: ImportFixture, channelId: string): Promise<Summary> {
  const response = await f.c.get(`/sites/${f.site.id}/channels/${channelId}/diagnostics/summary`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ Summary: Summary[] }>().Summary[0] as Summary
}

/** A Google Shopping channel over the stage as it is, in TSV, with its full file and its skipped file. */
export async function googleChannel(f: ImportFixture, body: Record<string, unknown> = {}): Promise<ChannelJson> {
  return createChannel(f, {
    name: 'Google',
    export_name: 'google_shopping',
    format: 'tsv',
    currency: 'EUR',
    filenames: [
      { type: null, filename: 'feed-{channel_id}.tsv' },
      { type: 'skipped', filename: 'skipped-{channel_id}.tsv' },
    ],
    ...body,
  })
}

/** The channel's files as text, keyed by the filename's kind (`full`, `skipped`, …). */
export async function files(t: TestContext, f: ImportFixture, channelId: string): Promise<Record<string, string>> {
  const channel = await readChannel(f, channelId)
  const out: Record<string, string> = {}
  const paths = feedPaths(channel)
  for (const [i, entry] of channel.filenames.entries()) {
    const path = paths[i]
    if (path === undefined) continue
    const response = await download(t, path)
    expect(response.statusCode, path).toBe(200)
    out[entry.type ?? 'full'] = response.body
  }
  return out
}

/** The ids in the first column of a TSV file, header left out. */
export function idsOf(tsv: string): string[] {
  return tsv
    .split('\n')
    .slice(1)
    .filter((line) => line !== '')
    .map((line) => line.split('\t')[0] ?? '')
}
