import { describe, expect, it } from 'vitest'
import { importFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { addRule, feedOf, importedSite, plainChannel, preview, readStage, type Row } from './rule-fixture.js'

// Hostile rules on hostile values: patterns that make a backtracking engine take exponential time
// ((a+)+$ and (x+x+)+y on long runs of a and x that end in no match), a map and an in-list of 1000
// entries. Postgres' regular expressions do not backtrack on them: the preview and the export finish
// and give the right values (no timing is asserted: finishing at all is what a backtracking engine
// would not do on 100,000 characters).

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

const LONG = 100_000
const RUNS = 500
const ENTRIES = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`Value ${i}`, `mapped ${i}`]))

const PRODUCTS: Row[] = [
  { id: 'a-bang', title: `${'a'.repeat(LONG)}!`, material: 'x'.repeat(LONG), availability: 'VALUE 999' },
  { id: 'a-only', title: 'a'.repeat(LONG), material: `${'x'.repeat(LONG)}y`, availability: 'value 0' },
  { id: 'plain', title: 'Shirt', material: 'cotton', availability: 'in stock' },
  // Many shorter ones: the whole-stage summary and the export read them all.
  ...Array.from({ length: RUNS }, (_, i) => ({
    id: `run-${String(i).padStart(3, '0')}`,
    title: `${'a'.repeat(2000 + i)}!`,
    material: 'x'.repeat(2000 + i),
    availability: `value ${i}`,
  })),
]

const matches = (attribute: string, value: string, more: Record<string, unknown> = {}) => ({ all: [{ attribute, operator: 'matches', value, ...more }] })

const RULES = [
  { attribute: 'a_tail', if: matches('title', '(a+)+$'), then: [{ action: 'set', value: 'only a' }], else: [{ action: 'set', value: 'not only a' }] },
  {
    attribute: 'x_then_y',
    if: matches('material', '(x+x+)+y', { case_sensitive: false }),
    then: [{ action: 'set', value: 'yes' }],
    else: [{ action: 'set', value: 'no' }],
  },
  { attribute: 'title', then: [{ action: 'regex_replace', pattern: '(a+)+!', replacement: 'A!' }] },
  { attribute: 'material', then: [{ action: 'regex_replace', pattern: '(x+x+)+y', replacement: 'XY', case_sensitive: false }] },
  { attribute: 'availability', then: [{ action: 'map', entries: ENTRIES, default: 'unmapped' }] },
  {
    attribute: 'listed',
    if: { all: [{ attribute: 'availability', operator: 'in', values: Object.values(ENTRIES) }] },
    then: [{ action: 'set', value: 'listed' }],
  },
]

describe('hostile patterns and huge lists', { timeout: 180_000 }, () => {
  it('finish in a preview and an export, with the right values', async () => {
    const f = await importFixture(t)
    await importedSite(f, PRODUCTS)
    const channelId = await plainChannel(f, 'ndjson')

    // The drafts, previewed over the whole stage (the summary reads every product).
    const drafted = await preview(f, { rules: RULES, ids: ['a-bang', 'a-only', 'plain', 'run-499'] })
    const after = Object.fromEntries(drafted.products.map((product) => [product.id, product.after ?? {}]))
    expect(after['a-bang']).toMatchObject({ a_tail: 'not only a', x_then_y: 'no', title: 'A!', material: 'x'.repeat(LONG), availability: 'mapped 999' })
    expect(after['a-only']).toMatchObject({ a_tail: 'only a', x_then_y: 'yes', title: 'a'.repeat(LONG), material: 'XY', availability: 'mapped 0' })
    expect(after.plain).toMatchObject({ a_tail: 'not only a', x_then_y: 'no', title: 'Shirt', material: 'cotton', availability: 'unmapped' })
    expect(after['run-499']).toMatchObject({ a_tail: 'not only a', title: 'A!', availability: 'mapped 499', listed: 'listed' })
    expect(after.plain?.listed ?? '').toBe('')
    expect(drafted.summary).toMatchObject({ products: RUNS + 3, changed: RUNS + 3, excluded: 0 })
    // Each rule's matches over the whole stage: (a+)+$ only the one of a alone, (x+x+)+y only the one ending in y, the in-list all but plain.
    expect(drafted.summary?.rules.map((rule) => rule.matched)).toEqual([1, 1, RUNS + 3, RUNS + 3, RUNS + 3, RUNS + 2])

    // A channel's preview of the same patterns as its rules (no site rules yet): the feed lines it would write.
    const channel = await preview(f, { rules: RULES.slice(0, 4), ids: ['a-bang', 'a-only'] }, channelId)
    const lines = channel.products.map((product) => JSON.parse(product.line ?? '{}') as Row)
    expect(lines.map((line) => [line.id, line.a_tail, line.x_then_y, line.title?.length, line.material])).toEqual([
      ['a-bang', 'not only a', 'no', 2, 'x'.repeat(LONG)],
      ['a-only', 'only a', 'yes', LONG, 'XY'],
    ])
    for (const rule of RULES) await addRule(f, rule)
    const run = await f.run('export-all')
    expect(run.status, run.message).toBe('success')
    const rows = new Map((await feedOf(t, f, channelId)).rows.map((row) => [row.id, row]))
    expect(rows.size).toBe(RUNS + 3)
    for (const [id, values] of Object.entries(after)) expect(rows.get(id), id).toEqual(expect.objectContaining(values))
    const stage = await readStage(t, f, 'intermediate')
    expect(stage.rows.filter((row) => row.a_tail === 'only a').map((row) => row.id)).toEqual(['a-only'])
    expect(stage.rows.filter((row) => row.title === 'A!')).toHaveLength(RUNS + 1)
  })
})
