import { isDeepStrictEqual } from 'node:util'
import { describe, expect, it } from 'vitest'
import { createChannel, download, history, readChannel } from '../helpers/clients.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { feedPaths } from '../helpers/responses.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { parseFeed, readStage, type Format, type Row } from '../exports/feed-rows.js'
import { addRule, rulesPath } from './rule-fixture.js'

// Five rounds of product changes and rule changes (issue 32): after each, every channel's export
// (incremental where the products changed, whole where a rule did) must be what a full recompute
// gives: its full file and its stage equal to a new channel's first export with the same settings
// and rules, and its history counts and delta files what comparing its previous full file with this
// one gives. Observed through the platform and stream interfaces only.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

const pad = (i: number) => `R${String(i).padStart(3, '0')}`
const SPELLINGS = ['in stock', 'In Stock', 'out of stock', 'IN STOCK ', 'preorder']
const BRANDS = ['Acme', 'globex', 'Initech', '']

function product(i: number, version = 0): Row {
  return {
    id: pad(i),
    title: `Shirt ${i}${version > 0 ? ` v${version}` : ''}`,
    brand: BRANDS[i % 4] ?? '',
    color: i % 3 === 0 ? '' : (['red', 'Blue'][i % 2] ?? 'red'),
    availability: SPELLINGS[i % 5] ?? 'in stock',
    price: `${(i * 7) % 90}.${i % 10}5`,
  }
}

interface ChannelCase {
  label: string
  format: Format
  body: Record<string, unknown>
  /** Channel rules as created, by name (a later round changes them). */
  rules: Record<string, Record<string, unknown>>
}

const FILES = (ext: string) => [
  { type: null, filename: `all-{channel_id}.${ext}` },
  { type: 'new', filename: `new-{channel_id}.${ext}` },
  { type: 'modified', filename: `modified-{channel_id}.${ext}` },
  { type: 'deleted', filename: `deleted-{channel_id}.${ext}` },
]
const DELTAS = ['new', 'modified', 'deleted'] as const

const CHANNELS: ChannelCase[] = [
  {
    // No mapping: its clean rows refer to the import stage's unless a rule changed them.
    label: 'ndjson without mapping',
    format: 'ndjson',
    body: { name: 'plain', format: 'ndjson', filenames: FILES('ndjson') },
    rules: {
      gone: { if: { all: [{ attribute: 'availability', operator: 'equals', value: 'out_of_stock' }] }, then: [{ action: 'exclude' }] },
      price: { attribute: 'price', then: [{ action: 'round', decimals: 0, mode: 'down' }] },
    },
  },
  {
    label: 'csv with mapping and filter',
    format: 'csv',
    body: {
      name: 'mapped',
      format: 'csv',
      mapping: [
        { column: 'sku', source: 'id' },
        { column: 'name', source: 'title' },
        { column: 'stock', source: 'availability' },
        { column: 'cost', source: 'price' },
      ],
      filter: "brand <> ''",
      filenames: FILES('csv'),
    },
    rules: {
      name: { attribute: 'name', then: [{ action: 'append', value: '{brand}', separator: ' by ' }] },
      cheap: { attribute: 'label', if: { any: [{ attribute: 'cost', operator: 'less_than', value: '20' }] }, then: [{ action: 'set', value: 'cheap' }] },
    },
  },
]

/** The full file's rows of a channel by product id (the column `idColumn`), and each delta file's ids. */
async function files(f: ImportFixture, channelId: string, format: Format, idColumn: string) {
  const paths = feedPaths(await readChannel(f, channelId))
  const rowsOf = async (path: string | undefined): Promise<Row[]> => {
    const response = await download(t, path ?? '')
    expect(response.statusCode, path).toBe(200)
    if (format === 'ndjson')
      return response.body === ''
        ? []
        : response.body
            .replace(/\n$/, '')
            .split('\n')
            .map((line) => JSON.parse(line) as Row)
    const columns = (response.body.split('\n')[0] ?? '').split(',')
    return response.body === '' ? [] : parseFeed(format, response.body, columns, path ?? '')
  }
  const byId = (rows: Row[]) => new Map(rows.map((row) => [row[idColumn] ?? '', row]))
  const [full, ...deltas] = await Promise.all(paths.map(rowsOf))
  return { full: byId(full ?? []), deltas: Object.fromEntries(DELTAS.map((type, i) => [type, [...byId(deltas[i] ?? []).keys()].sort()])) }
}

/** A new channel with the settings and rules of `model`, exported once: the full recompute. */
async function recomputed(f: ImportFixture, model: ChannelCase, ruleBodies: Record<string, unknown>[]) {
  const fresh = await createChannel(f, { ...model.body, name: `${model.body.name as string} recomputed` })
  for (const body of ruleBodies) await addRule(f, body, fresh.id)
  const run = await f.run('channel', { id: fresh.id })
  expect(run.status, run.message).toBe('success')
  return fresh.id
}

describe('rules across five rounds of product and rule changes', () => {
  it('give the stages, files and deltas of a full recompute', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    const upload = async (rows: Row[]) => expect((await f.upload(stream, rows)).statusCode).toBe(202)
    const remove = async (ids: string[]) => expect((await f.deleteProducts(stream, ids)).statusCode).toBe(202)
    const siteRule = async (body: Record<string, unknown>) => (await addRule(f, body)).id
    const availability = await siteRule({
      attribute: 'availability',
      then: [{ action: 'trim' }, { action: 'map', entries: { 'in stock': 'in_stock', 'out of stock': 'out_of_stock' } }],
    })
    await siteRule({ attribute: 'title', then: [{ action: 'concat', parts: [{ attribute: 'title' }, { attribute: 'color' }], separator: ' - ' }] })
    const channels: {
      model: ChannelCase
      id: string
      ruleIds: Record<string, string>
      bodies: Record<string, Record<string, unknown>>
      previous: Map<string, Row>
    }[] = []
    for (const model of CHANNELS) {
      const channel = await createChannel(f, model.body)
      const ids: Record<string, string> = {}
      for (const [name, body] of Object.entries(model.rules)) ids[name] = (await addRule(f, body, channel.id)).id
      channels.push({
        model,
        id: channel.id,
        ruleIds: ids,
        bodies: { ...model.rules } as Record<string, Record<string, unknown>>,
        previous: new Map<string, Row>(),
      })
    }
    const rounds: { name: string; change: () => Promise<void> }[] = [
      { name: 'first export', change: () => upload(Array.from({ length: 60 }, (_, i) => product(i))) },
      {
        name: 'products changed, added, deleted, and changed in ways the rules undo',
        change: async () => {
          await upload([...[1, 2, 3, 11, 12].map((i) => product(i, 1)), product(61), product(62), { ...product(4), availability: 'out of stock' }])
          await remove([pad(5), pad(6)])
          // "IN STOCK " and "in stock" both become in_stock: the import rows change, the intermediate rows do not.
          await upload([
            { ...product(13), availability: 'in stock' },
            { ...product(18), availability: 'In Stock' },
          ])
        },
      },
      {
        name: 'a site rule added',
        change: async () =>
          void (await siteRule({
            attribute: 'color',
            then: [
              { action: 'default_if_empty', value: 'multicolor' },
              { action: 'case', to: 'lower' },
            ],
          })),
      },
      {
        name: 'products flip in and out of the exclude, channel rules reordered and changed',
        change: async () => {
          await upload([{ ...product(7), availability: 'Out of Stock' }, { ...product(8), availability: 'in stock', price: '5.55' }, product(9, 3)])
          for (const channel of channels) {
            const names = Object.keys(channel.ruleIds).reverse()
            const order = await f.c.put(`${rulesPath(f, channel.id)}/order`, { ids: names.map((n) => channel.ruleIds[n]) })
            expect(order.statusCode, order.body).toBe(200)
            channel.bodies = Object.fromEntries(names.map((n) => [n, channel.bodies[n] ?? {}]))
          }
          const plain = channels[0]
          if (plain) {
            const body = { attribute: 'price', then: [{ action: 'round', decimals: 1, mode: 'up' }] }
            expect((await f.c.put(`${rulesPath(f, plain.id)}/${plain.ruleIds.price}`, body)).statusCode).toBe(200)
            plain.bodies.price = body
          }
        },
      },
      {
        name: 'a site rule disabled, and deletions',
        change: async () => {
          await remove([pad(20), pad(21), pad(22)])
          expect((await f.c.put(`${rulesPath(f)}/${availability}`, { enabled: false })).statusCode).toBe(200)
        },
      },
    ]
    for (const round of rounds) {
      await round.change()
      const run = await f.run('all')
      expect(run.status, `${round.name}: ${run.message}`).toBe('success')
      for (const channel of channels) {
        const what = `${round.name}, ${channel.model.label}`
        const idColumn = channel.model.format === 'csv' ? 'sku' : 'id'
        const now = await files(f, channel.id, channel.model.format, idColumn)
        const freshId = await recomputed(f, channel.model, Object.values(channel.bodies))
        const fresh = await files(f, freshId, channel.model.format, idColumn)
        expect(Object.fromEntries(now.full), `${what}: the full file against a full recompute`).toEqual(Object.fromEntries(fresh.full))
        const stage = await readStage(t, f, `channel/${channel.id}`)
        const freshStage = await readStage(t, f, `channel/${freshId}`)
        expect(stage, `${what}: the channel stage against a full recompute's`).toEqual(freshStage)
        const expected = { new: [] as string[], modified: [] as string[], deleted: [] as string[] }
        for (const [id, row] of now.full) {
          const before = channel.previous.get(id)
          if (!before) expected.new.push(id)
          else if (!isDeepStrictEqual(before, row)) expected.modified.push(id)
        }
        for (const id of channel.previous.keys()) if (!now.full.has(id)) expected.deleted.push(id)
        expect(now.deltas, `${what}: the delta files`).toEqual({
          new: expected.new.sort(),
          modified: expected.modified.sort(),
          deleted: expected.deleted.sort(),
        })
        const entry = (await history(f, channel.id)).find((e) => e.pid === run.pid)
        expect([entry?.product_count_new, entry?.product_count_modified, entry?.product_count_deleted, entry?.product_count_now], `${what}: history`).toEqual(
          [expected.new.length, expected.modified.length, expected.deleted.length, now.full.size].map(String),
        )
        channel.previous = now.full
        expect((await f.c.send('DELETE', `/sites/${f.site.id}/channels/${freshId}`)).statusCode).toBe(200)
      }
    }
  })
})
