import { beforeAll, describe, expect, it } from 'vitest'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { addRule, listRules, rulesPath } from './rule-fixture.js'

// Every mistake in a rule is a 400 in the platform's error body whose message starts with the field
// it names, and saves nothing: unknown actions and operators, missing parameters, wrong types,
// patterns that do not compile or would backtrack, attribute names and texts the stage cannot hold,
// bodies that are no rule. rule-bounds.test.ts has the limits, rule-access.test.ts other accounts.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

let f: ImportFixture
beforeAll(async () => {
  f = await importFixture(t)
})

const rule = (...then: unknown[]) => ({ attribute: 'title', then })
const when = (...all: unknown[]) => ({ attribute: 'title', if: { all }, then: [{ action: 'trim' }] })
const cond = (operator: string, more: Record<string, unknown> = {}) => ({ attribute: 'title', operator, ...more })

// [what, body, the field the message starts with, and a word it has]
const MISTAKES: [string, unknown, string, RegExp][] = [
  ['an unknown action', rule({ action: 'explode' }), 'then[0].action', /"explode" is no action/],
  ['an action without a name', rule({ value: 'x' }), 'then[0].action', /use one of/],
  ['an action that is no object', rule('set'), 'then[0]', /action object/],
  ['then that is no list', { attribute: 'title', then: { action: 'trim' } }, 'then', /list/],
  ['no then', { attribute: 'title' }, 'then', /at least one/],
  ['an empty then', rule(), 'then', /at least one/],
  ['else that is no list', { ...rule({ action: 'trim' }), else: 'trim' }, 'else', /list/],
  ['an unknown operator', when(cond('like', { value: 'x' })), 'if.all[0].operator', /use one of/],
  ['a condition without a value', when(cond('equals')), 'if.all[0].value', /required/],
  ['a value that is a number', when(cond('equals', { value: 5 })), 'if.all[0].value', /text/],
  ['in without values', when(cond('in', { value: 'a' })), 'if.all[0].values', /list/],
  ['in with an empty list', when(cond('in', { values: [] })), 'if.all[0].values', /non-empty/],
  ['in with a number among the values', when(cond('in', { values: ['a', 2] })), 'if.all[0].values[1]', /text/],
  ['a number operator with a word', when(cond('greater_than', { value: 'ten' })), 'if.all[0].value', /number/],
  ['a number operator with a comma decimal', when(cond('less_than', { value: '19,99' })), 'if.all[0].value', /number/],
  ['a length that is negative', when(cond('length_greater_than', { value: '-1' })), 'if.all[0].value', /whole number/],
  ['case_sensitive that is no flag', when(cond('equals', { value: 'a', case_sensitive: 'yes' })), 'if.all[0].case_sensitive', /true or false/],
  ['a condition without an attribute', when({ operator: 'is_empty' }), 'if.all[0].attribute', /required/],
  ['a condition that is no object', when('title is empty'), 'if.all[0]', /condition object/],
  ['if that is a condition, not a group', { ...rule({ action: 'trim' }), if: cond('is_empty') }, 'if', /"all" and "any"/],
  ['if with both all and any', { ...rule({ action: 'trim' }), if: { all: [cond('is_empty')], any: [cond('is_empty')] } }, 'if', /exactly one/],
  ['if with an empty group', { ...rule({ action: 'trim' }), if: { any: [] } }, 'if.any', /non-empty/],
  ['if that is a text', { ...rule({ action: 'trim' }), if: 'always' }, 'if', /group/],
  ['groups three levels deep', when({ any: [{ all: [cond('is_empty')] }] }), 'if.all[0].any[0]', /two levels/],
  ['set without a value', rule({ action: 'set' }), 'then[0].value', /required/],
  ['set with a number', rule({ action: 'set', value: 19.99 }), 'then[0].value', /text/],
  ['copy without from', rule({ action: 'copy' }), 'then[0].from', /attribute name/],
  ['append with a separator that is no text', rule({ action: 'append', value: 'x', separator: 1 }), 'then[0].separator', /text/],
  ['prepend without a value', rule({ action: 'prepend', separator: ' ' }), 'then[0].value', /required/],
  ['concat without parts', rule({ action: 'concat' }), 'then[0].parts', /non-empty list/],
  ['concat with a part of neither kind', rule({ action: 'concat', parts: [{ text: 'x' }] }), 'then[0].parts[0]', /"attribute"/],
  ['concat with an empty attribute', rule({ action: 'concat', parts: [{ attribute: ' ' }] }), 'then[0].parts[0].attribute', /required/],
  ['replace with nothing to find', rule({ action: 'replace', find: '', replacement: 'x' }), 'then[0].find', /empty/],
  ['replace without find', rule({ action: 'replace', replacement: 'x' }), 'then[0].find', /required/],
  ['map without entries', rule({ action: 'map' }), 'then[0].entries', /object/],
  ['map with a list of entries', rule({ action: 'map', entries: [['a', 'b']] }), 'then[0].entries', /object/],
  ['map with no entries', rule({ action: 'map', entries: {} }), 'then[0].entries', /object/],
  ['map to a number', rule({ action: 'map', entries: { a: 1 } }), 'then[0].entries["a"]', /text/],
  ['map with twins when case is ignored', rule({ action: 'map', entries: { 'In Stock': 'a', 'in stock': 'b' } }), 'then[0].entries', /same value/],
  ['map with a default that is no text', rule({ action: 'map', entries: { a: 'b' }, default: false }), 'then[0].default', /text/],
  ['regex_replace without a pattern', rule({ action: 'regex_replace', replacement: 'x' }), 'then[0].pattern', /required/],
  ['a pattern that does not compile: (', rule({ action: 'regex_replace', pattern: '(' }), 'then[0].pattern', /does not compile/],
  ['a pattern that does not compile: [a-', rule({ action: 'regex_replace', pattern: '[a-' }), 'then[0].pattern', /does not compile/],
  ['a pattern too complex to build', rule({ action: 'regex_replace', pattern: '(\\w{1,255}){1,255}' }), 'then[0].pattern', /does not compile/],
  ['a back-reference', rule({ action: 'regex_replace', pattern: '(a+)\\1' }), 'then[0].pattern', /back-references/],
  ['a look-ahead', rule({ action: 'regex_replace', pattern: 'a(?=b)' }), 'then[0].pattern', /look-ahead/],
  ['a negative look-behind', rule({ action: 'regex_replace', pattern: '(?<!a)b' }), 'then[0].pattern', /look-behind/],
  ['embedded options', rule({ action: 'regex_replace', pattern: '(?i)abc' }), 'then[0].pattern', /case_sensitive/],
  ['a director', rule({ action: 'regex_replace', pattern: '***=a' }), 'then[0].pattern', /directors/],
  ['a matches pattern that does not compile', when(cond('matches', { value: '[a-' })), 'if.all[0].value', /does not compile/],
  ['a matches look-ahead', when(cond('matches', { value: '^(?!a)' })), 'if.all[0].value', /look-ahead/],
  ['a matches back-reference', when(cond('matches', { value: '(x)\\1' })), 'if.all[0].value', /back-references/],
  ['split_take without a separator', rule({ action: 'split_take' }), 'then[0].separator', /required/],
  ['split_take with an empty separator', rule({ action: 'split_take', separator: '' }), 'then[0].separator', /empty/],
  ['split_take from that is no whole number', rule({ action: 'split_take', separator: ',', from: 1.5 }), 'then[0].from', /whole number/],
  ['split_take from a text', rule({ action: 'split_take', separator: ',', from: '1' }), 'then[0].from', /whole number/],
  ['split_take of no parts', rule({ action: 'split_take', separator: ',', count: 0 }), 'then[0].count', /whole number/],
  ['case to no case', rule({ action: 'case', to: 'camel' }), 'then[0].to', /lower, upper, title or sentence/],
  ['case without to', rule({ action: 'case' }), 'then[0].to', /lower/],
  ['round to too many decimals', rule({ action: 'round', decimals: 7 }), 'then[0].decimals', /0 to 6/],
  ['round to decimals as a text', rule({ action: 'round', decimals: '2' }), 'then[0].decimals', /whole number/],
  ['round in no mode', rule({ action: 'round', mode: 'nearest' }), 'then[0].mode', /half_up, up or down/],
  ['truncate without max', rule({ action: 'truncate' }), 'then[0].max', /whole number/],
  ['truncate to nothing', rule({ action: 'truncate', max: 0 }), 'then[0].max', /whole number/],
  ['truncate with a suffix longer than max', rule({ action: 'truncate', max: 3, suffix: '....' }), 'then[0].suffix', /max/],
  ['default_if_empty without a value', rule({ action: 'default_if_empty' }), 'then[0].value', /required/],
  ['an action without an attribute to write', { then: [{ action: 'trim' }] }, 'attribute', /required/],
  ['an attribute that is a number', { ...rule({ action: 'trim' }), attribute: 7 }, 'attribute', /attribute name/],
  ['a blank attribute', { ...rule({ action: 'trim' }), attribute: '  ' }, 'attribute', /attribute name/],
  ['an attribute name too long', { ...rule({ action: 'trim' }), attribute: 'a'.repeat(256) }, 'attribute', /255/],
  ['an attribute name with NUL', { ...rule({ action: 'trim' }), attribute: 'ti\u0000tle' }, 'attribute', /NUL/],
  ['an attribute name with a lone surrogate', { ...rule({ action: 'trim' }), attribute: 'ti\ud800tle' }, 'attribute', /surrogate/],
  ['enabled that is no flag', { ...rule({ action: 'trim' }), enabled: 'no' }, 'enabled', /true or false/],
  ['a description that is no text', { ...rule({ action: 'trim' }), description: ['x'] }, 'description', /text/],
  ['NUL in a value', rule({ action: 'set', value: 'a\u0000b' }), 'then[0].value', /NUL/],
  ['a lone surrogate in a value', rule({ action: 'set', value: 'a\udc00b' }), 'then[0].value', /surrogate/],
  ['a lone surrogate in a map key', rule({ action: 'map', entries: { 'a\ud800': 'x' } }), 'then[0].entries.a\ud800', /surrogate/],
  ['NUL in a map value', rule({ action: 'map', entries: { x: '\u0000' } }), 'then[0].entries.x', /NUL/],
  ['NUL in a condition value', when(cond('contains', { value: '\u0000' })), 'if.all[0].value', /NUL/],
  ['a lone surrogate among in values', when(cond('in', { values: ['ok', '\udfff'] })), 'if.all[0].values[1]', /surrogate/],
  ['NUL in a concat literal', rule({ action: 'concat', parts: [{ value: '\u0000' }] }), 'then[0].parts[0].value', /NUL/],
  ['a lone surrogate in a pattern', rule({ action: 'regex_replace', pattern: 'a\ud83d' }), 'then[0].pattern', /surrogate/],
]

/** Asserts a 400 in the platform's body whose message starts with `field` and says `word`. */
function expectMistake(response: { statusCode: number; body: string }, field: string, word: RegExp, what: string): void {
  expect(response.statusCode, `${what}: ${response.body}`).toBe(400)
  const body = JSON.parse(response.body) as { success: boolean; message: string }
  expect(body.success, what).toBe(false)
  expect(body.message.startsWith(`${field}: `), `${what}: "${body.message}" names ${field}`).toBe(true)
  expect(body.message, what).toMatch(word)
}

describe('a rule with a mistake is a 400 naming the field, and saves nothing', () => {
  it.each(MISTAKES)('%s', async (what, body, field, word) => {
    expectMistake(await f.c.post(rulesPath(f), body as object), field, word, what)
  })

  it('none of them was saved', async () => {
    expect(await listRules(f)).toEqual([])
  })

  it('a body that is no object: an array, null, a text, a number', async () => {
    for (const payload of ['[]', '[{"attribute":"title","then":[{"action":"trim"}]}]', 'null', '"rule"', '42']) {
      for (const [method, url] of [
        ['POST', rulesPath(f)],
        ['POST', `${rulesPath(f)}/preview`],
        ['PUT', `${rulesPath(f)}/order`],
      ] as const) {
        const response = await t.request({ method, url: `/platform/v2${url}`, headers: { ...f.account.platform, 'content-type': 'application/json' }, payload })
        expectMistake(response, 'body', /object/, `${method} ${url} ${payload}`)
      }
    }
    expect(await listRules(f)).toEqual([])
  })

  it('a map entry named __proto__ is kept as any other', async () => {
    const saved = await addRule(f, rule({ action: 'map', entries: JSON.parse('{"__proto__": "proto", "a": "b"}') as object }))
    expect(saved.then).toEqual([{ action: 'map', entries: JSON.parse('{"__proto__": "proto", "a": "b"}') as object, case_sensitive: false }])
    expect(Object.keys((saved.then[0] as { entries: object }).entries).sort()).toEqual(['__proto__', 'a'])
    const deleted = await f.c.del(`${rulesPath(f)}/${saved.id}`)
    expect(deleted.statusCode, deleted.body).toBe(200)
  })
})

describe('an update with a mistake is a 400 and leaves the rule as it was', () => {
  // Fields a body leaves out keep their values: only mistakes in the fields it sends.
  it.each(MISTAKES.slice(0, 30).filter(([what]) => what !== 'no then'))('%s', async (what, body, field, word) => {
    const saved = await addRule(f, { attribute: 'title', then: [{ action: 'trim' }] })
    const path = `${rulesPath(f)}/${saved.id}`
    expectMistake(await f.c.put(path, body as object), field, word, what)
    const read = await f.c.get(path)
    expect(read.statusCode, read.body).toBe(200)
    expect(read.json<{ Rules: unknown[] }>().Rules).toEqual([saved])
    await f.c.del(path)
  })
})

describe('a preview with a mistake is a 400 naming the field', () => {
  const previews: [string, Record<string, unknown>, string, RegExp][] = [
    ['a draft with a mistake', { rules: [rule({ action: 'trim' }), rule({ action: 'explode' })] }, 'rules[1].then[0].action', /no action/],
    ['a draft pattern that does not compile', { rules: [rule({ action: 'regex_replace', pattern: '(' })] }, 'rules[0].then[0].pattern', /compile/],
    ['rules that are no list', { rules: rule({ action: 'trim' }) }, 'rules', /list/],
    ['ids that are no list', { ids: 'a' }, 'ids', /list/],
    ['an id with NUL', { ids: ['a\u0000'] }, 'ids[0]', /id/],
    ['an id that is a number', { ids: [1] }, 'ids[0]', /product id/],
    ['more than 50 ids', { ids: Array.from({ length: 51 }, (_, i) => `p${i}`) }, 'ids', /50/],
    ['a limit of 51', { limit: 51 }, 'limit', /1 to 50/],
    ['a limit of 0', { limit: 0 }, 'limit', /1 to 50/],
    ['a filter with NUL', { filter: "title = 'a\u0000'" }, 'filter', /NUL/],
    ['changed_only that is no flag', { changed_only: 'yes' }, 'changed_only', /true or false/],
  ]
  it.each(previews)('%s', async (what, body, field, word) => {
    expectMistake(await f.c.post(`${rulesPath(f)}/preview`, body), field, word, what)
  })
})
