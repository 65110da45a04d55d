import { describe, expect, it } from 'vitest'
import { importFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { rendered } from '../exports/feed-rows.js'
import { ALL_IDS, CORPUS } from './rule-corpus.js'
import { addRule, feedOf, importedSite, listRules, plainChannel, preview, readStage, type PreviewProductJson, type Row } from './rule-fixture.js'

// Rules saved on the shared catalog (rule-corpus.ts), site and channel, then an export: the files
// carry exactly what the previews showed, line for line, and the intermediate stage reads as the site
// preview's products. A preview of drafts writes nothing.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

const SITE_RULES = [
  { attribute: 'title', then: [{ action: 'concat', parts: [{ attribute: 'brand' }, { attribute: 'title' }, { attribute: 'color' }] }] },
  { attribute: 'title', then: [{ action: 'truncate', max: 30, suffix: '…' }] },
  { attribute: 'price', then: [{ action: 'round', decimals: 2 }] },
  { attribute: 'description', then: [{ action: 'strip_html' }] },
  { attribute: 'material', then: [{ action: 'trim' }, { action: 'regex_replace', pattern: '([0-9]+) ?cm', replacement: '$1 cm', case_sensitive: false }] },
  { attribute: 'category', then: [{ action: 'split_take', separator: ' > ', from: -1 }] },
  { attribute: 'color', then: [{ action: 'default_if_empty', value: 'multicolor' }] },
  {
    attribute: 'label',
    then: [
      { action: 'set', value: '{brand}/{size}' },
      { action: 'replace', find: '/', replacement: ' · ' },
    ],
  },
  { if: { all: [{ attribute: 'availability', operator: 'equals', value: 'OUT OF STOCK' }] }, then: [{ action: 'exclude' }] },
]

const CHANNEL_RULES = [
  { attribute: 'availability', then: [{ action: 'map', entries: { 'in stock': 'in_stock', vorrätig: 'in_stock' }, default: 'unknown' }] },
  { if: { all: [{ attribute: 'brand', operator: 'equals', value: '無印良品' }] }, then: [{ action: 'exclude' }] },
  { attribute: 'title', if: { all: [{ attribute: 'price', operator: 'greater_than', value: '100' }] }, then: [{ action: 'case', to: 'upper' }] },
]

const withoutRuleIds = (products: PreviewProductJson[]) =>
  products.map((product) => ({ ...product, steps: product.steps.map((step) => ({ ...step, rule_id: undefined })) }))
const lines = (text: string) => new Map(text.split('\n').flatMap((line) => (line === '' ? [] : [[(JSON.parse(line) as Row).id, line] as const])))

describe('the next export writes what the preview shows', () => {
  it('site and channel rules: feed lines, csv rows and the intermediate stage equal the previews', async () => {
    const f = await importFixture(t)
    await importedSite(f, CORPUS)
    const ndjson = await plainChannel(f, 'ndjson')
    const csv = await plainChannel(f, 'csv')
    const before = await readStage(t, f, 'intermediate')

    // Drafts are previewed, never saved: no rule, and the stages read as before.
    const drafted = await preview(f, { rules: SITE_RULES, limit: 50 })
    expect(drafted.products.find((product) => product.id === 'full')?.after?.title).toBe('Acme Shirt red')
    expect(await listRules(f)).toEqual([])
    expect(await readStage(t, f, 'intermediate')).toEqual(before)

    for (const rule of SITE_RULES) await addRule(f, rule)
    for (const rule of CHANNEL_RULES) await addRule(f, rule, ndjson)
    const site = await preview(f, { limit: 50 })
    const channel = await preview(f, { limit: 50 }, ndjson)
    // The previews of the saved rules are those of the same drafts.
    expect(withoutRuleIds(site.products)).toEqual(withoutRuleIds(drafted.products))
    expect(site.products.map((product) => product.id)).toEqual([...ALL_IDS].sort())

    const run = await f.run('export-all')
    expect(run.status, run.message).toBe('success')

    // The channel file: each product's line is the channel preview's, byte for byte; excluded ones have none.
    const written = lines((await feedOf(t, f, ndjson)).text)
    const previewed = new Map(channel.products.flatMap((product) => (product.line ? [[product.id, product.line] as const] : [])))
    expect(written).toEqual(previewed)
    expect([...written.keys()]).not.toContain('empty')
    expect([...written.keys()]).not.toContain('cjk')
    expect(JSON.parse(written.get('full') ?? '{}')).toMatchObject({
      title: 'Acme Shirt red',
      price: '20.00',
      availability: 'in_stock',
      description: 'Fish & Chips',
      category: 'Knives',
      label: 'Acme · XL',
    })
    expect(JSON.parse(written.get('emoji') ?? '{}')).toMatchObject({ title: '🚀 ROCKET 😀😀😀 😀😀😀 绿色', availability: 'unknown' })
    expect(JSON.parse(written.get('blank') ?? '{}')).toMatchObject({ material: 'Länge 30 cm, Breite 20 cm', color: 'multicolor', price: '-2.35' })

    // The intermediate stage and the csv file (no channel rules): the site preview's products, the
    // out-of-stock one excluded by the site rule, the CJK one only from the other channel.
    const stage = await readStage(t, f, 'intermediate')
    const kept = site.products.filter((product) => !product.excluded)
    expect(site.products.filter((product) => product.excluded).map((product) => product.id)).toEqual(['empty'])
    expect(stage.columns).toEqual(site.columns)
    expect(stage.rows).toEqual(kept.map((product) => rendered(product.after ?? {}, site.columns)))
    expect(stage.rows.map((row) => row.id)).toContain('cjk')
    const csvRows = (await feedOf(t, f, csv)).rows
    expect(csvRows).toEqual(kept.map((product) => rendered(product.after ?? {}, site.columns)))
  })
})
