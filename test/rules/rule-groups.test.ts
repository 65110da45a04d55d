import { beforeAll, describe, expect, it } from 'vitest'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { afterValues, CORPUS, expectMatches, on } from './rule-corpus.js'
import { addRule, feedOf, importedSite, listRules, plainChannel, preview, rulesPath } from './rule-fixture.js'

// Conditions combined: all/any groups two levels deep, else actions, and the order of a scope's
// rules, which PUT …/rules/order changes for every later preview and export.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

let f: ImportFixture
beforeAll(async () => {
  f = await importFixture(t)
  await importedSite(f, CORPUS)
})

describe('groups', () => {
  it('any of all-groups: a brand without colour, or a price over 100', async () => {
    const group = { any: [{ all: [on('brand', 'is_not_empty'), on('color', 'is_empty')] }, { all: [on('price', 'greater_than', { value: '100' })] }] }
    await expectMatches(f, group, {
      full: false,
      empty: true,
      missing: true,
      blank: false,
      emoji: true,
      'brand-only': true,
      'only-id': false,
    })
  })

  it('all of a condition and an any-group', async () => {
    const group = {
      all: [{ any: [on('title', 'contains', { value: 'fox' }), on('title', 'contains', { value: 'SHIRT' })] }, on('price', 'greater_than', { value: '1' })],
    }
    await expectMatches(f, group, { full: true, long: false, empty: false, 'only-id': false })
  })

  it('a group of one condition is that condition; any of conditions holds when one does', async () => {
    await expectMatches(f, { any: [on('color', 'equals', { value: 'red' })] }, { full: true, empty: false })
    await expectMatches(
      f,
      { any: [on('color', 'equals', { value: 'red' }), on('color', 'equals', { value: 'blue' })] },
      { full: true, accents: true, word: false },
    )
    await expectMatches(f, { all: [on('color', 'equals', { value: 'red' }), on('color', 'equals', { value: 'blue' })] }, { full: false, accents: false })
  })
})

describe('else', () => {
  it('runs the else actions, in order, where the condition does not hold', async () => {
    const rule = {
      attribute: 'label',
      if: { all: [on('availability', 'in', { values: ['in stock', 'vorrätig'] })] },
      then: [{ action: 'set', value: 'available' }],
      else: [
        { action: 'copy', from: 'availability' },
        { action: 'default_if_empty', value: 'unknown' },
        { action: 'case', to: 'upper' },
      ],
    }
    expect(await afterValues(f, [rule], 'label', ['full', 'missing', 'empty', 'emoji', 'blank', 'only-id'])).toEqual({
      full: 'available',
      missing: 'available',
      empty: 'OUT OF STOCK',
      emoji: 'UNKNOWN',
      blank: 'IN STOCK ',
      'only-id': 'UNKNOWN',
    })
  })

  it('a rule without a condition always runs its then actions, never its else', async () => {
    const rule = { attribute: 'label', if: null, then: [{ action: 'set', value: 'always' }], else: [{ action: 'set', value: 'never' }] }
    expect(await afterValues(f, [rule], 'label', ['full', 'only-id'])).toEqual({ full: 'always', 'only-id': 'always' })
  })
})

describe('order', () => {
  it('swapping two rules with PUT …/rules/order gives another preview and another feed', async () => {
    const g = await importFixture(t)
    await importedSite(g, [
      { id: 'a', title: 'Shirt', availability: 'In Stock' },
      { id: 'b', title: 'Hat', availability: 'out of stock' },
    ])
    const channelId = await plainChannel(g, 'ndjson')
    // The map writes what the condition looks for: only when it runs first does the label come.
    const map = await addRule(g, { attribute: 'availability', then: [{ action: 'map', entries: { 'in stock': 'in_stock', 'out of stock': 'out_of_stock' } }] })
    const label = await addRule(g, {
      attribute: 'title',
      if: { all: [on('availability', 'equals', { value: 'in_stock', case_sensitive: true })] },
      then: [{ action: 'append', value: 'available', separator: ' – ' }],
    })
    const titles = async () => (await preview(g, { ids: ['a', 'b'] })).products.map((product) => product.after?.title)
    const feedTitles = async () => {
      const run = await g.run('export-all')
      expect(run.status, run.message).toBe('success')
      return (await feedOf(t, g, channelId)).rows.map((row) => [row.title, row.availability])
    }
    expect(await titles()).toEqual(['Shirt – available', 'Hat'])
    expect(await feedTitles()).toEqual([
      ['Shirt – available', 'in_stock'],
      ['Hat', 'out_of_stock'],
    ])

    const swapped = await g.c.put(`${rulesPath(g)}/order`, { ids: [label.id, map.id] })
    expect(swapped.statusCode, swapped.body).toBe(200)
    expect(swapped.json<{ Rules: { id: string; position: number }[] }>().Rules.map((rule) => [rule.id, rule.position])).toEqual([
      [label.id, 1],
      [map.id, 2],
    ])
    expect((await listRules(g)).map((rule) => rule.id)).toEqual([label.id, map.id])
    expect(await titles()).toEqual(['Shirt', 'Hat'])
    expect(await feedTitles()).toEqual([
      ['Shirt', 'in_stock'],
      ['Hat', 'out_of_stock'],
    ])
  })

  it('a disabled rule does not run, and drafts in another order give another result', async () => {
    const upper = { attribute: 'title', then: [{ action: 'case', to: 'upper' }] }
    const tee = { attribute: 'title', then: [{ action: 'replace', find: 'SHIRT', replacement: 'Tee' }] }
    expect(await afterValues(f, [upper, tee], 'title', ['full'])).toEqual({ full: 'Tee' })
    expect(await afterValues(f, [tee, upper], 'title', ['full'])).toEqual({ full: 'SHIRT' })
    expect(await afterValues(f, [{ ...upper, enabled: false }, tee], 'title', ['full'])).toEqual({ full: 'Shirt' })
  })
})
