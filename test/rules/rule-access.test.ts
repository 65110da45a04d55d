import { describe, expect, it } from 'vitest'
import { importFixture, type ImportFixture } from '../helpers/factories.js'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { addRule, listRules, plainChannel, rulesPath, type RuleJson } from './rule-fixture.js'

// Whose rules a request reaches: another account's site, channel and rule are a 404 for every
// method, and a rule of one scope is not one of another's. Reordering takes every rule of the scope
// exactly once, or is a 400 that changes nothing.

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

const body = { attribute: 'title', then: [{ action: 'set', value: 'x' }] }

interface Owned {
  f: ImportFixture
  channelId: string
  siteRule: RuleJson
  channelRule: RuleJson
}

async function owned(): Promise<Owned> {
  const f = await importFixture(t)
  const channelId = await plainChannel(f, 'csv')
  return { f, channelId, siteRule: await addRule(f, body), channelRule: await addRule(f, body, channelId) }
}

/** Every request on the rules below `base`, with `ruleId` for those on one rule. */
function requests(base: string, ruleId: string): ['GET' | 'POST' | 'PUT' | 'DELETE', string, object?][] {
  return [
    ['GET', `${base}/rules`],
    ['POST', `${base}/rules`, body],
    ['POST', `${base}/rules/preview`, { rules: [body] }],
    ['PUT', `${base}/rules/order`, { ids: [ruleId] }],
    ['GET', `${base}/rules/${ruleId}`],
    ['PUT', `${base}/rules/${ruleId}`, { enabled: false }],
    ['DELETE', `${base}/rules/${ruleId}`],
  ]
}

async function expectNotFound(caller: ImportFixture, list: ReturnType<typeof requests>): Promise<void> {
  for (const [method, path, payload] of list) {
    const response = await caller.c.send(method, path, payload)
    expect(response.statusCode, `${method} ${path}: ${response.body}`).toBe(404)
    expect(response.json(), `${method} ${path}`).toEqual({ success: false, message: expect.any(String) })
  }
}

describe('another account', () => {
  it('gets a 404 for every rule request on a site, channel or rule not its own, which stay as they were', async () => {
    const a = await owned()
    const b = await owned()
    const site = `/sites/${a.f.site.id}`
    const channel = `${site}/channels/${a.channelId}`
    await expectNotFound(b.f, requests(site, a.siteRule.id))
    await expectNotFound(b.f, requests(channel, a.channelRule.id))
    // Its own site and channel with the other account's rule, or the other account's channel.
    const own = `/sites/${b.f.site.id}`
    await expectNotFound(b.f, requests(own, a.siteRule.id).slice(4))
    await expectNotFound(b.f, requests(`${own}/channels/${b.channelId}`, a.channelRule.id).slice(4))
    await expectNotFound(b.f, requests(`${own}/channels/${a.channelId}`, a.channelRule.id))

    expect(await listRules(a.f)).toEqual([a.siteRule])
    expect(await listRules(a.f, a.channelId)).toEqual([a.channelRule])
    expect(await listRules(b.f)).toEqual([b.siteRule])
  })

  it('a rule of the site is not one of its channel, nor the other way round', async () => {
    const a = await owned()
    const site = `/sites/${a.f.site.id}`
    await expectNotFound(a.f, requests(`${site}/channels/${a.channelId}`, a.siteRule.id).slice(4))
    await expectNotFound(a.f, requests(site, a.channelRule.id).slice(4))
    expect(await listRules(a.f)).toEqual([a.siteRule])
    expect(await listRules(a.f, a.channelId)).toEqual([a.channelRule])
  })
})

describe('PUT …/rules/order', () => {
  it('a list that misses, repeats or adds an id is a 400 naming ids, and the order stays', async () => {
    const { f, channelRule } = await owned()
    const [r1, r2, r3] = [await listRules(f).then((rules) => rules[0] as RuleJson), await addRule(f, body), await addRule(f, body)]
    const before = await listRules(f)
    expect(before.map((rule) => rule.id)).toEqual([r1.id, r2.id, r3.id])
    const mistakes: [unknown, string, RegExp][] = [
      [{ ids: [r2.id, r1.id] }, 'ids', /missing/],
      [{ ids: [r3.id, r2.id, r1.id, '999999'] }, 'ids', /999999 is no rule/],
      [{ ids: [r3.id, r2.id, r1.id, channelRule.id] }, 'ids', /is no rule of this site/],
      [{ ids: [r3.id, r2.id, r2.id, r1.id] }, 'ids', /listed twice/],
      [{ ids: [r3.id, 'first', r1.id] }, 'ids[1]', /rule id/],
      [{ ids: [] }, 'ids', /missing/],
      [{}, 'ids', /required/],
      [{ ids: r1.id }, 'ids', /required/],
    ]
    for (const [payload, field, word] of mistakes) {
      const response = await f.c.put(`${rulesPath(f)}/order`, payload as object)
      expect(response.statusCode, `${JSON.stringify(payload)}: ${response.body}`).toBe(400)
      const message = response.json<{ message: string }>().message
      expect(message.startsWith(`${field}: `), message).toBe(true)
      expect(message).toMatch(word)
      expect(await listRules(f), JSON.stringify(payload)).toEqual(before)
    }
    const reordered = await f.c.put(`${rulesPath(f)}/order`, { ids: [r3.id, r1.id, r2.id] })
    expect(reordered.statusCode, reordered.body).toBe(200)
    expect((await listRules(f)).map((rule) => [rule.id, rule.position])).toEqual([
      [r3.id, 1],
      [r1.id, 2],
      [r2.id, 3],
    ])
  })

  it('deleting a rule moves the later ones up: positions stay 1…n', async () => {
    const { f } = await owned()
    const second = await addRule(f, body)
    const third = await addRule(f, body)
    const deleted = await f.c.del(`${rulesPath(f)}/${second.id}`)
    expect(deleted.statusCode, deleted.body).toBe(200)
    const rules = await listRules(f)
    expect(rules.map((rule) => rule.position)).toEqual([1, 2])
    expect(rules[1]?.id).toBe(third.id)
    const again = await f.c.del(`${rulesPath(f)}/${second.id}`)
    expect(again.statusCode, again.body).toBe(404)
  })
})
