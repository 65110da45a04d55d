import { describe, expect, it } from 'vitest'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importedSite, listRules, plainChannel, rulesPath } from './rule-fixture.js'

// The bounds of rules (README "Limits"): each quantity at its bound is accepted, one past it is a 400
// naming the field. Characters are counted as Postgres counts them: an emoji is one.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

const EMOJI = '😀'
const trim = { action: 'trim' }
const rule = (...then: unknown[]) => ({ attribute: 'title', then })
const when = (...all: unknown[]) => ({ attribute: 'title', if: { all }, then: [trim] })
const cond = (operator: string, more: Record<string, unknown> = {}) => ({ attribute: 'title', operator, ...more })
const times = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i))

async function expectAccepted(f: ImportFixture, body: object, what: string): Promise<void> {
  const response = await f.c.post(rulesPath(f), body)
  expect(response.statusCode, `${what}: ${response.body.slice(0, 300)}`).toBe(201)
}

async function expectRefused(f: ImportFixture, body: object, field: string, what: string): Promise<void> {
  const response = await f.c.post(rulesPath(f), body)
  expect(response.statusCode, `${what}: ${response.body.slice(0, 300)}`).toBe(400)
  expect(response.json<{ message: string }>().message.startsWith(`${field}: `), `${what}: ${response.body.slice(0, 300)}`).toBe(true)
}

// [what, at the bound, one past it, the field the 400 names]
const BOUNDS: [string, object, object, string][] = [
  ['20 actions in then', rule(...times(20, () => trim)), rule(...times(21, () => trim)), 'then'],
  [
    '20 actions in then and else',
    { ...rule(...times(10, () => trim)), else: times(10, () => trim) },
    { ...rule(...times(10, () => trim)), else: times(11, () => trim) },
    'then, else',
  ],
  ['50 conditions of a group', when(...times(50, () => cond('is_empty'))), when(...times(51, () => cond('is_empty'))), 'if.all'],
  ['50 conditions of an inner group', when({ any: times(50, () => cond('is_empty')) }), when({ any: times(51, () => cond('is_empty')) }), 'if.all[0].any'],
  [
    '50 parts of a concat',
    rule({ action: 'concat', parts: times(50, (i) => ({ value: `${i}` })) }),
    rule({ action: 'concat', parts: times(51, (i) => ({ value: `${i}` })) }),
    'then[0].parts',
  ],
  [
    '1000 map entries',
    rule({ action: 'map', entries: Object.fromEntries(times(1000, (i) => [`v${i}`, `w${i}`])) }),
    rule({ action: 'map', entries: Object.fromEntries(times(1001, (i) => [`v${i}`, `w${i}`])) }),
    'then[0].entries',
  ],
  ['1000 in values', when(cond('in', { values: times(1000, (i) => `v${i}`) })), when(cond('in', { values: times(1001, (i) => `v${i}`) })), 'if.all[0].values'],
  [
    '1000 not_in values',
    when(cond('not_in', { values: times(1000, (i) => `v${i}`) })),
    when(cond('not_in', { values: times(1001, (i) => `v${i}`) })),
    'if.all[0].values',
  ],
  [
    'a 500-character pattern',
    rule({ action: 'regex_replace', pattern: 'a'.repeat(500) }),
    rule({ action: 'regex_replace', pattern: 'a'.repeat(501) }),
    'then[0].pattern',
  ],
  [
    'a pattern of 500 emoji',
    rule({ action: 'regex_replace', pattern: EMOJI.repeat(500) }),
    rule({ action: 'regex_replace', pattern: EMOJI.repeat(501) }),
    'then[0].pattern',
  ],
  ['a 500-character matches pattern', when(cond('matches', { value: 'b'.repeat(500) })), when(cond('matches', { value: 'b'.repeat(501) })), 'if.all[0].value'],
  ['a 2000-character value', rule({ action: 'set', value: 'v'.repeat(2000) }), rule({ action: 'set', value: 'v'.repeat(2001) }), 'then[0].value'],
  ['a value of 2000 emoji', rule({ action: 'set', value: EMOJI.repeat(2000) }), rule({ action: 'set', value: EMOJI.repeat(2001) }), 'then[0].value'],
  [
    'a 2000-character condition value',
    when(cond('contains', { value: 'c'.repeat(2000) })),
    when(cond('contains', { value: 'c'.repeat(2001) })),
    'if.all[0].value',
  ],
  [
    'a 2000-character map value',
    rule({ action: 'map', entries: { a: 'm'.repeat(2000) } }),
    rule({ action: 'map', entries: { a: 'm'.repeat(2001) } }),
    'then[0].entries["a"]',
  ],
  ['a 2000-character description', { ...rule(trim), description: 'd'.repeat(2000) }, { ...rule(trim), description: 'd'.repeat(2001) }, 'description'],
  ['a 255-character attribute name', { ...rule(trim), attribute: 'n'.repeat(255) }, { ...rule(trim), attribute: 'n'.repeat(256) }, 'attribute'],
  ['an attribute name of 255 emoji', { ...rule(trim), attribute: EMOJI.repeat(255) }, { ...rule(trim), attribute: EMOJI.repeat(256) }, 'attribute'],
  [
    'split_take from -1000',
    rule({ action: 'split_take', separator: ',', from: -1000 }),
    rule({ action: 'split_take', separator: ',', from: -1001 }),
    'then[0].from',
  ],
  [
    'split_take 1000 parts',
    rule({ action: 'split_take', separator: ',', count: 1000 }),
    rule({ action: 'split_take', separator: ',', count: 1001 }),
    'then[0].count',
  ],
  ['round to 6 decimals', rule({ action: 'round', decimals: 6 }), rule({ action: 'round', decimals: 7 }), 'then[0].decimals'],
  ['truncate to 100,000', rule({ action: 'truncate', max: 100_000 }), rule({ action: 'truncate', max: 100_001 }), 'then[0].max'],
  ['a suffix one shorter than max', rule({ action: 'truncate', max: 3, suffix: '..' }), rule({ action: 'truncate', max: 3, suffix: '...' }), 'then[0].suffix'],
  [
    'a length of nine digits',
    when(cond('length_greater_than', { value: '999999999' })),
    when(cond('length_greater_than', { value: '1000000000' })),
    'if.all[0].value',
  ],
]

describe('the bounds of a rule', () => {
  it.each(BOUNDS)('%s: at the bound accepted, one past refused', async (what, at, past, field) => {
    const f = await importFixture(t)
    await expectAccepted(f, at, what)
    await expectRefused(f, past, field, what)
    expect(await listRules(f), what).toHaveLength(1)
  })

  it('patterns the checks must not refuse: an escaped backslash before a digit or a parenthesis', async () => {
    const f = await importFixture(t)
    await expectAccepted(f, rule({ action: 'regex_replace', pattern: 'C:\\\\1' }), 'a backslash and a 1')
    await expectAccepted(f, when(cond('matches', { value: '\\(?=' })), 'an optional parenthesis and =')
    await expectRefused(f, rule({ action: 'regex_replace', pattern: '\\\\\\1' }), 'then[0].pattern', 'a backslash and a back-reference')
  })
})

describe('the bound on rules of a scope', () => {
  it('100 rules of a site and 100 of each channel; the 101st is a 400 and saves nothing', async () => {
    const f = await importFixture(t)
    const channelId = await plainChannel(f, 'csv')
    for (const scope of [undefined, channelId]) {
      for (let i = 0; i < 100; i++) {
        const response = await f.c.post(rulesPath(f, scope), { attribute: `a${i}`, then: [{ action: 'set', value: `${i}` }] })
        expect(response.statusCode, response.body).toBe(201)
      }
      const refused = await f.c.post(rulesPath(f, scope), { attribute: 'more', then: [trim] })
      expect(refused.statusCode, refused.body).toBe(400)
      expect(refused.json<{ message: string }>().message).toMatch(/at most 100 rules/)
      const rules = await listRules(f, scope)
      expect(rules.map((saved) => saved.position)).toEqual(times(100, (i) => i + 1))
      expect(rules.map((saved) => saved.attribute)).not.toContain('more')
    }
  })

  it('a preview takes 100 drafts, not 101', async () => {
    const f = await importFixture(t)
    const drafts = (n: number) => times(n, (i) => ({ attribute: `a${i}`, then: [{ action: 'set', value: `${i}` }] }))
    const accepted = await f.c.post(`${rulesPath(f)}/preview`, { rules: drafts(100) })
    expect(accepted.statusCode, accepted.body.slice(0, 300)).toBe(200)
    const refused = await f.c.post(`${rulesPath(f)}/preview`, { rules: drafts(101) })
    expect(refused.statusCode).toBe(400)
    expect(refused.json<{ message: string }>().message).toMatch(/^rules: at most 100/)
  })
})

describe("the bounds that keep a scope's SQL small", () => {
  it("100 actions over a scope's rules; one more, by a new rule, a change or drafts, is a 400 and saves nothing", async () => {
    const f = await importFixture(t)
    const twenty = times(20, () => trim)
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      const response = await f.c.post(rulesPath(f), { attribute: `a${i}`, then: twenty })
      expect(response.statusCode, response.body).toBe(201)
      ids.push(response.json<{ Rules: { id: string }[] }>().Rules[0]!.id)
    }
    const more = await f.c.post(rulesPath(f), { attribute: 'more', then: [trim] })
    expect(more.statusCode).toBe(400)
    expect(more.json<{ message: string }>().message).toMatch(
      /^then, else: a site's rules have at most 100 actions together; with this rule they would have 101/,
    )
    const grown = await f.c.put(`${rulesPath(f)}/${ids[0]}`, { then: twenty, else: [trim] })
    expect(grown.statusCode).toBe(400)
    expect((await listRules(f)).map((saved) => saved.attribute)).toEqual(['a0', 'a1', 'a2', 'a3', 'a4'])
    const drafts = times(6, (i) => ({ attribute: `d${i}`, then: twenty }))
    const preview = await f.c.post(`${rulesPath(f)}/preview`, { rules: drafts })
    expect(preview.statusCode).toBe(400)
    expect(preview.json<{ message: string }>().message).toMatch(/more than 100 actions together/)
  })

  it('cuts what an action writes at 100,000 characters, however the rules grow a value', async () => {
    const f = await importFixture(t)
    await importedSite(f, [{ id: 'p1', title: 'Shirt' }])
    const rules = [
      {
        attribute: 'x',
        then: [
          { action: 'set', value: '{title}'.repeat(50) },
          { action: 'set', value: '{x}'.repeat(50) },
          { action: 'set', value: '{x}'.repeat(50) },
        ],
      },
    ]
    const response = await f.c.post(`${rulesPath(f)}/preview`, { rules, summary: false, ids: ['p1'] })
    expect(response.statusCode, response.body.slice(0, 300)).toBe(200)
    const after = response.json<{ Previews: { products: { after: Record<string, string> | null }[] }[] }>().Previews[0]!.products[0]!.after
    expect(after?.x?.length).toBe(100_000)
    const tooMany = await f.c.post(rulesPath(f), { attribute: 'x', then: [{ action: 'set', value: '{x}'.repeat(51) }] })
    expect(tooMany.statusCode).toBe(400)
    expect(tooMany.json<{ message: string }>().message).toMatch(/^then\[0\]\.value: names 51 \{attribute\}s; at most 50/)
  })

  it("refuses a rule that writes the product's id", async () => {
    const f = await importFixture(t)
    for (const attribute of ['id', ' ID ']) {
      const response = await f.c.post(rulesPath(f), { attribute, then: [{ action: 'set', value: 'same' }] })
      expect(response.statusCode).toBe(400)
      expect(response.json<{ message: string }>().message).toMatch(/^attribute: id is the product's key/)
    }
  })

  it('refuses to turn a channel to XML while one of its rules writes an attribute XML cannot carry, naming the rule', async () => {
    const f = await importFixture(t)
    const channelId = await plainChannel(f, 'csv')
    const rule = await f.c.post(rulesPath(f, channelId), { attribute: 'has space', then: [{ action: 'set', value: 'x' }] })
    expect(rule.statusCode, rule.body).toBe(201)
    const ruleId = rule.json<{ Rules: { id: string }[] }>().Rules[0]!.id
    const changed = await f.c.put(`/sites/${f.site.id}/channels/${channelId}`, { format: 'xml' })
    expect(changed.statusCode).toBe(400)
    expect(changed.json<{ message: string }>().message).toMatch(new RegExp(`^format: xml cannot carry the attribute "has space" that rule ${ruleId}`))
  })
})
