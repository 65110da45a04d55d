import { mkdtempSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { factories, importFixture, type ImportFixture, type Given } from '../helpers/factories.js'
import { createChannel, readChannel } from '../helpers/clients.js'

// Channel settings an export cannot carry out are refused when they are saved, by the export's own
// rules, naming the field; a channel stored before those rules fails each run once with the reason.

// A directory of this file's own: a legacy file name must not write outside it.
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'channel-save-rules-'))
const t = useTestApp({ ...HIGH_LIMITS, DATA_DIR: dataDir, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })
const given = factories(t)

const xml = (column: string) => ({
  format: 'xml',
  mapping: [
    { column: 'g:id', source: 'id' },
    { column, source: 'title' },
  ],
})

// Each body is a setting every export of the channel would fail on (or write other than asked).
const REFUSED: [string, (siteId: string) => Record<string, unknown>, RegExp][] = [
  [
    'an XML name starting with xmlns',
    () => xml('xmlns'),
    /^mapping\[1\]\.column: "xmlns" is not a valid XML element name for format xml: names starting with "xml", in any case, are reserved/,
  ],
  ['an XML name starting with xml_', () => xml('xml_data'), /^mapping\[1\]\.column: "xml_data" .*reserved by XML/],
  [
    'an 80-character g: name, which Postgres would cut',
    () => xml(`g:${'a'.repeat(78)}`),
    /^mapping\[1\]\.column: "g:a+" .*has 80 characters and Postgres, which writes the element, cuts names at 63/,
  ],
  ['an XML name with a space', () => xml('sale price'), /^mapping\[1\]\.column: "sale price" .*" " cannot be part of one/],
  ['an XML name starting with a letter outside ASCII', () => xml('ünï'), /^mapping\[1\]\.column: "ünï" .*must start with an ASCII letter \(A-Z, a-z\) or _/],
  ['an XML name with a letter outside ASCII', () => xml('größe'), /^mapping\[1\]\.column: "größe" .*"ö" cannot be part of one \(ASCII letters/],
  ['an undeclared XML prefix', () => xml('x:id'), /^mapping\[1\]\.column: "x:id" .*the prefix "x:" is not declared/],
  [
    'a lone surrogate in a column name',
    () => ({ format: 'ndjson', mapping: [{ column: 'a\uD800', source: 'id' }] }),
    /^mapping\[0\]\.column: must not contain a lone UTF-16 surrogate/,
  ],
  [
    'a file name longer than a file system takes once filled in',
    () => ({ filenames: [{ type: null, filename: '{date}'.repeat(42) }] }),
    /^filenames\[0\]\.filename: "(\{date\})+" can have 420 bytes once its placeholders are filled in/,
  ],
  [
    'a file name too long for a 19-digit id',
    () => ({ filenames: [{ type: null, filename: '{site_id}'.repeat(14) }] }),
    /^filenames\[0\]\.filename: .*can have 266 bytes/,
  ],
  [
    'two file names that are one once the site id is filled in',
    (siteId) => ({
      filenames: [
        { type: null, filename: '{site_id}.csv' },
        { type: 'new', filename: `${siteId}.csv` },
      ],
    }),
    /^filenames\[1\]\.filename: "\d+\.csv" can name the same file as filenames\[0\] \("\{site_id\}\.csv"\)/,
  ],
  [
    'two file names that are one on some day',
    () => ({
      filenames: [
        { type: null, filename: 'feed-{date}.csv' },
        { type: 'new', filename: 'feed-2031-02-03.csv' },
      ],
    }),
    /^filenames\[1\]\.filename: .*can name the same file as filenames\[0\]/,
  ],
]

async function channels(f: ImportFixture): Promise<unknown> {
  return (await f.platform('GET', `/sites/${f.site.id}/channels`)).json()
}

describe('saving a channel', () => {
  it.each(REFUSED)('refuses %s on create with a 400 naming the field, and saves nothing', async (_, body, message) => {
    const f = await importFixture(t)
    const response = await f.platform('POST', `/sites/${f.site.id}/channels`, { name: 'Google', export_name: 'google', ...body(f.site.id) })
    expect(response.statusCode, response.body).toBe(400)
    expect(response.json()).toEqual({ success: false, message: expect.stringMatching(message) })
    expect(await channels(f)).toEqual({ success: true, Channels: [] })
  })

  it.each(REFUSED)('refuses %s on update with a 400 naming the field, and keeps the settings', async (_, body, message) => {
    const f = await importFixture(t)
    const channel = await createChannel(f, { format: 'csv', mapping: [{ column: 'id', source: 'id' }], filenames: [{ type: null, filename: 'feed.csv' }] })
    const response = await f.platform('PUT', `/sites/${f.site.id}/channels/${channel.id}`, body(f.site.id))
    expect(response.statusCode, response.body).toBe(400)
    expect(response.json()).toEqual({ success: false, message: expect.stringMatching(message) })
    expect(await readChannel(f, channel.id)).toEqual(channel)
  })

  it('checks a kept mapping against a new format, and file names against the channel id', async () => {
    const f = await importFixture(t)
    const channel = await createChannel(f, {
      format: 'csv',
      mapping: [
        { column: 'id', source: 'id' },
        { column: 'sale price', source: 'price' },
      ],
    })
    const toXml = await f.platform('PUT', `/sites/${f.site.id}/channels/${channel.id}`, { format: 'xml' })
    expect(toXml.statusCode, toXml.body).toBe(400)
    expect(toXml.json<{ message: string }>().message).toMatch(/^mapping\[1\]\.column: "sale price" is not a valid XML element name for format xml/)
    const named = await f.platform('PUT', `/sites/${f.site.id}/channels/${channel.id}`, {
      filenames: [
        { type: null, filename: '{channel_id}.csv' },
        { type: 'deleted', filename: `${channel.id}.csv` },
      ],
    })
    expect(named.statusCode, named.body).toBe(400)
    expect(named.json<{ message: string }>().message).toMatch(/^filenames\[1\]\.filename: .*same file as filenames\[0\]/)
    expect(await readChannel(f, channel.id)).toEqual(channel)

    // Names that differ on every day and for every id are saved.
    const fine = await f.platform('PUT', `/sites/${f.site.id}/channels/${channel.id}`, {
      format: 'xml',
      mapping: [
        { column: 'g:id', source: 'id' },
        { column: 'sale_price', source: 'price' },
      ],
      filenames: [
        { type: null, filename: 'feed-{date}.xml' },
        { type: 'new', filename: 'feed-{date}-new.xml' },
        { type: 'deleted', filename: 'feed-2031-02-03x.xml' },
      ],
    })
    expect(fine.statusCode, fine.body).toBe(200)
  })
})

// Settings stored before the rules existed: each made the export throw something retried (2005 twice,
// then 9002), or wrote where it should not.
type LegacySettings = Omit<Parameters<Given['legacyChannel']>[0], 'account' | 'site'>

const LEGACY: [string, LegacySettings, RegExp][] = [
  [
    'two file names for one file',
    {
      format: 'csv',
      filenames: [
        { type: null, filename: 'feed.csv' },
        { type: 'new', filename: 'feed.csv' },
      ],
    },
    /filenames\[1\]\.filename: "feed\.csv" appears twice/,
  ],
  ['an empty file name', { format: 'csv', filenames: [{ type: null, filename: '' }] }, /filenames\[0\]\.filename: use letters, digits/],
  [
    'a file name leaving its directory',
    { format: 'csv', filenames: [{ type: null, filename: '../../escaped.csv' }] },
    /filenames\[0\]\.filename: use letters, digits/,
  ],
  [
    'a mapping of bare strings',
    { format: 'csv', mapping: ['id'], filenames: [{ type: null, filename: 'feed.csv' }] },
    /mapping\[0\]\.column: must be a non-empty column name/,
  ],
]

describe('a channel stored with settings an export cannot carry out', () => {
  it.each(LEGACY)('with %s fails each run once, with one site error naming the setting', async (_, settings, reason) => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    expect((await f.upload(stream, [{ id: 'A', title: 'Shirt' }])).statusCode).toBe(202)
    const channelId = await given.legacyChannel({ account: f.account, site: f.site, ...settings })

    const run = await f.run('all')
    expect(run.status).toBe('failed')
    const status = await f.platform('GET', `/sites/${f.site.id}/status/${run.pid}`)
    expect(status.json()).toMatchObject({ status: 'failed', message: `Channels ${channelId} failed to export; see the site errors` })
    const errors = await f.errors(run.pid)
    expect(errors.map((e) => e.error)).toEqual(['2007', '2005'])
    const unwritable = errors[0]
    expect(unwritable?.message).toMatch(new RegExp(`^Channel ${channelId}: ${reason.source}.*Change this setting of the channel; its previous files are kept$`))
    expect(JSON.parse(unwritable?.data ?? '{}')).toMatchObject({ channel_id: channelId, field: expect.stringMatching(/^(filenames|mapping)\[\d\]/) })
    // From the table: the channel view cannot show every shape a legacy row may have (bare strings).
    const entries = await t.db.selectFrom('channel_export').select('process_status').where('channel_id', '=', channelId).execute()
    expect(entries.map((entry) => entry.process_status)).toEqual(['failed'])
    // Nothing was written anywhere, inside the feeds directory or out of it.
    expect(await fs.readdir(dataDir, { recursive: true })).not.toContainEqual(expect.stringMatching(/\.csv$/))
  })
})
