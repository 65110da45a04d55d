import { parse as parseCsv } from 'csv-parse/sync'
import { XMLParser } from 'fast-xml-parser'
import { beforeAll, describe, expect, it } from 'vitest'
import { templateNamed } from '../../src/templates/template-catalog.js'
import { checkCodes } from '../../src/templates/template-codes.js'
import { createChannel, download, readChannel } from '../helpers/clients.js'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { feedPaths } from '../helpers/responses.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { buildExamples, gs1CheckDigit, sourceOf, type CheckJson, type Example, type Examples, type Row, type TemplateJson } from './template-examples.js'

// Every check code of every built-in template, failed by a hand-built example and passed by a good
// product, observed through the platform interface only: the template's description, the channel's
// diagnostics and summary, its full feed and its skipped file, after one run over one upload.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

interface Diagnostic {
  id: string
  attribute: string
  code: string
  severity: string
  message: string
  value: string
  hint: string
}
interface ChannelRun {
  id: string
  /** The full feed's rows by product id (the mapped column row_ref), keys without the `g:` namespace. */
  feed: Map<string, Row>
  /** Product id → the code the skipped file gives. */
  skipped: Map<string, string>
}
interface Scenario extends Examples {
  template: TemplateJson
  channels: Record<string, ChannelRun>
  diagnostics(productId: string, channel?: string): Promise<Diagnostic[]>
  summary(channel?: string): Promise<Record<string, unknown>>
}

const xmlParser = new XMLParser({ parseTagValue: false, trimValues: false, isArray: (name) => name === 'item' })

/** A file's records as objects; in xml each item's elements, in csv and tsv the header's columns. */
function records(format: string, body: string, prefix: string | undefined): Row[] {
  if (format !== 'xml') return parseCsv(body, { columns: true, delimiter: format === 'tsv' ? '\t' : ',' }) as Row[]
  // A repeated element (size_type, …) is several elements: one value, its parts joined as a text feed has them.
  const parsed = (xmlParser.parse(body) as { rss: { channel: { item?: Record<string, string | string[]>[] } } }).rss.channel.item ?? []
  const items = parsed.map((item) => Object.fromEntries(Object.entries(item).map(([key, value]) => [key, Array.isArray(value) ? value.join(', ') : value])))
  if (prefix === undefined) return items
  // Google's elements are all in its namespace: `price` is written <g:price>.
  return items.map((item) =>
    Object.fromEntries(Object.entries(item).map(([key, value]) => [key.startsWith(`${prefix}:`) ? key.slice(prefix.length + 1) : `!${key}`, value])),
  )
}

async function channelFiles(f: ImportFixture, id: string, format: string, prefix?: string): Promise<ChannelRun> {
  const [full, skipped] = await Promise.all(
    feedPaths(await readChannel(f, id)).map(async (path) => {
      const response = await download(t, path)
      expect(response.statusCode, path).toBe(200)
      return response.body
    }),
  )
  const feed = new Map(records(format, full ?? '', prefix).map((row) => [row.row_ref ?? '', row]))
  return { id, feed, skipped: new Map(records(format, skipped ?? '', undefined).map((row) => [row.id ?? row['g:id'] ?? '', row.code ?? row['g:code'] ?? ''])) }
}

/**
 * One site and stream, every example in one upload, a channel of the template (plus `extra` ones,
 * with their own settings) mapping each attribute from the column of its name, one run.
 */
async function runScenario(name: string, extra: Record<string, Record<string, unknown>> = {}, more: (good: Row) => Example[] = () => []): Promise<Scenario> {
  const f = await importFixture(t)
  const response = await f.c.get(`/export_templates/${name}`)
  expect(response.statusCode, response.body).toBe(200)
  const template = response.json<{ ExportTemplates: TemplateJson[] }>().ExportTemplates[0] as TemplateJson
  const built = buildExamples(template)
  const examples = [...built.examples, ...more(built.good)]
  const stream = await f.createStream()
  await f.attach(stream)
  const rows = examples.map((e) => e.row)
  const uploaded = await f.upload(stream, rows)
  expect(uploaded.statusCode, uploaded.body).toBe(202)
  const format = template.default_format
  const mapping = [{ column: 'row_ref', source: 'id' }, ...template.attributes.map((a) => ({ column: a.name, source: sourceOf(a.name) }))]
  const filenames = [
    { type: null, filename: `full-{channel_id}.${format}` },
    { type: 'skipped', filename: `skipped-{channel_id}.${format}` },
  ]
  const ids: Record<string, string> = {}
  for (const [key, body] of Object.entries({ main: {}, ...extra })) {
    ids[key] = (await createChannel(f, { name: `${name} ${key}`, export_name: name, format, currency: 'EUR', mapping, filenames, ...body })).id
  }
  const run = await f.run('all')
  expect(run.status, run.message).toBe('success')
  const channels: Record<string, ChannelRun> = {}
  const prefix = name === 'google_shopping' ? 'g' : undefined
  for (const [key, id] of Object.entries(ids)) channels[key] = await channelFiles(f, id, format, prefix)
  const base = (channel: string) => `/sites/${f.site.id}/channels/${channels[channel]?.id ?? ''}/diagnostics`
  return {
    ...built,
    examples,
    template,
    channels,
    async diagnostics(productId, channel = 'main') {
      const listed = await f.c.get(`${base(channel)}?limit=1000&id=${encodeURIComponent(productId)}`)
      expect(listed.statusCode, listed.body).toBe(200)
      const { Diagnostics, meta } = listed.json<{ Diagnostics: Diagnostic[]; meta: { total: number } }>()
      expect(meta.total, `total of ${productId}`).toBe(Diagnostics.length)
      return Diagnostics
    },
    async summary(channel = 'main') {
      const read = await f.c.get(`${base(channel)}/summary`)
      expect(read.statusCode, read.body).toBe(200)
      return read.json<{ Summary: Record<string, unknown>[] }>().Summary[0] ?? {}
    },
  }
}

const severityIn = (s: Scenario, code: string) => s.template.checks.find((c) => c.code === code)?.severity
const hasSeverity = (s: Scenario, e: Example, severity: string) => e.expected.some((code) => severityIn(s, code) === severity)
const short = (change: Row) => JSON.stringify(Object.fromEntries(Object.entries(change).map(([k, v]) => [k, v.length > 60 ? `${v.slice(0, 60)}…` : v])))

/** The example's diagnostics are exactly its expected codes, and it is in the feed unless it has an error (mode exclude). */
async function expectReported(s: Scenario, example: Example, channel = 'main', leftOut = hasSeverity(s, example, 'error')): Promise<Diagnostic[]> {
  const what = `${s.template.name} product ${example.id} ${short(example.change)}`
  const listed = await s.diagnostics(example.id, channel)
  const quoted = JSON.stringify(listed.map((d) => [d.code, d.value.slice(0, 60)]))
  expect(listed.map((d) => d.code).sort(), `${what}: listed ${quoted}`).toEqual([...example.expected].sort())
  expect(s.channels[channel]?.feed.has(example.id), `${what}: in the feed`).toBe(!leftOut)
  expect(s.channels[channel]?.skipped.has(example.id), `${what}: in the skipped file`).toBe(leftOut)
  return listed
}

interface TemplateTests {
  extra?: Parameters<typeof runScenario>[1]
  more?: Parameters<typeof runScenario>[2]
  tests?: (get: () => Scenario) => void
}

function describeTemplate(name: string, { extra, more, tests = () => {} }: TemplateTests = {}) {
  // Test names come from the template's definition; the first test holds them to what the HTTP description lists.
  const template = templateNamed(name)
  const codes = template ? checkCodes(template).map((c) => c.code) : []
  describe(name, () => {
    let scenario: Scenario | undefined
    const get = () => scenario ?? expect.fail('the scenario did not run')
    beforeAll(async () => {
      scenario = await runScenario(name, extra, more)
    }, 120_000)

    it('describes the codes the tests are named by, and every one has a failing example', () => {
      const s = get()
      expect(s.template.checks.map((c) => c.code)).toEqual(codes)
      expect(s.uncovered, 'codes without an example').toEqual([])
    })

    it('reports nothing on the good product and its variants, and exports them', async () => {
      const s = get()
      for (const example of s.examples.filter((e) => e.code === undefined && e.expected.length === 0)) await expectReported(s, example)
    })

    it.each(codes)(`${name}: %s is reported on its failing examples`, async (code) => {
      const s = get()
      const check = s.template.checks.find((c) => c.code === code) as CheckJson
      const examples = s.examples.filter((e) => e.code === code)
      expect(examples.length, `examples of ${code}`).toBeGreaterThan(0)
      for (const example of examples) {
        const entry = (await expectReported(s, example)).find((d) => d.code === code)
        const { attribute, severity, message, hint } = check
        expect(entry, example.id).toMatchObject({ id: example.id, attribute, severity, message, hint })
        // The value quoted is the one the check read, as sent (a bare price without the currency the feed adds), cut to 200 characters.
        expect(entry?.value, example.id).toBe((example.row[sourceOf(attribute)] ?? '').slice(0, 200))
        if (example.feedValue !== undefined) expect(s.channels.main?.feed.get(example.id)?.[attribute], example.id).toBe(example.feedValue)
      }
    })

    it('counts in its summary what the examples fail', async () => {
      const s = get()
      const count = (test: (e: Example) => boolean) => s.examples.filter(test).length
      const errors = count((e) => hasSeverity(s, e, 'error'))
      const warnings = count((e) => hasSeverity(s, e, 'warning'))
      const byCode = s.template.checks
        .map(({ code, attribute, severity, message }) => ({ code, attribute, severity, message, count: count((e) => e.expected.includes(code)) }))
        .filter((c) => c.count > 0)
      const bySeverity = (severity: string) => byCode.filter((c) => c.severity === severity).reduce((sum, c) => sum + c.count, 0)
      expect(await s.summary()).toMatchObject({
        products_checked: s.examples.length,
        products_exported: s.examples.length - errors,
        products_left_out: errors,
        products_with_errors: errors,
        products_with_warnings: warnings,
        products_exported_with_warnings: count((e) => !hasSeverity(s, e, 'error') && hasSeverity(s, e, 'warning')),
        readiness_score: (s.examples.length - errors) / s.examples.length,
        by_severity: { error: bySeverity('error'), warning: bySeverity('warning'), info: bySeverity('info') },
        by_code: byCode,
      })
    })

    it('leaves out exactly the products with an error, each in the skipped file with its first error', () => {
      const s = get()
      const errorCodes = s.template.checks.filter((c) => c.severity === 'error').map((c) => c.code)
      const leftOut = s.examples.filter((e) => hasSeverity(s, e, 'error'))
      const firstError = (e: Example) => errorCodes.find((code) => e.expected.includes(code)) ?? ''
      expect(s.channels.main?.skipped).toEqual(new Map(leftOut.map((e) => [e.id, firstError(e)])))
      const exported = s.examples.filter((e) => !leftOut.includes(e)).map((e) => e.id)
      expect([...(s.channels.main?.feed.keys() ?? [])].sort()).toEqual(exported.sort())
      const outside = [...(s.channels.main?.feed.values() ?? [])].flatMap((row) => Object.keys(row).filter((k) => k.startsWith('!')))
      expect(outside, 'elements outside the namespace').toEqual([])
    })

    tests(get)
  })
}

it('computes GS1 check digits as published (EAN 4006381333931, UPC 036000291452)', () => {
  expect(gs1CheckDigit('400638133393')).toBe('1')
  expect(gs1CheckDigit('03600029145')).toBe('2')
})

const noIdentifiers = (value: string) => ({ gtin: '', mpn: '', identifier_exists: value })
// identifier_exists in each spelling Google reads as no: only `no` itself is not rewritten.
const NO_SPELLINGS = ['no', 'false', 'No', 'FALSE', ' no ', '0']
describeTemplate('google_shopping', {
  more: (good) =>
    NO_SPELLINGS.map((value, i) => ({
      id: `exempt-${i}`,
      change: noIdentifiers(value),
      row: { ...good, ...noIdentifiers(value), id: `exempt-${i}` },
      expected: value === 'no' ? [] : ['identifier_exists_normalised'],
    })),
  tests: (get) => {
    it('fails neither identifier_missing nor gtin_missing where identifier_exists says, in any spelling, the product has no identifiers', async () => {
      const s = get()
      for (const example of s.examples.filter((e) => e.id.startsWith('exempt-'))) {
        await expectReported(s, example)
        expect(s.channels.main?.feed.get(example.id)?.identifier_exists, example.id).toBe('no')
      }
    })
  },
})

describeTemplate('meta_catalog', {
  extra: { warn: { validation_mode: 'warn_only' } },
  tests: (get) => {
    it('exports the products with errors, with their diagnostics, on a warn_only channel', async () => {
      const s = get()
      const errors = s.examples.filter((e) => hasSeverity(s, e, 'error'))
      expect(errors.length).toBeGreaterThan(0)
      expect(await s.summary('warn')).toMatchObject({
        validation_mode: 'warn_only',
        products_left_out: 0,
        products_exported: s.examples.length,
        products_with_errors: errors.length,
      })
      for (const example of errors) await expectReported(s, example, 'warn', false)
      expect(s.channels.warn?.skipped.size).toBe(0)
    })
  },
})

describeTemplate('idealo')
