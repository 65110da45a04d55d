import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture } from '../helpers/factories.js'
import { JSON_API } from '../helpers/clients.js'

// Paging parameters beyond what Postgres' bigint holds are a client's mistake (400 in the
// interface's own body), not a 500 from the database.

const t = useTestApp(HIGH_LIMITS)

describe('paging parameters past 64 bits', () => {
  it.each(['9223372036854775807', '9223372036854775808', '1e20', '1e308'])('answer 400 with %s', async (huge) => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    const platform = [
      `/product/v2/site/${f.site.id}/stage/import/0?offset=${huge}`,
      `/platform/v2/sites/${f.site.id}/errors?offset=${huge}`,
      `/platform/v2/sites/${f.site.id}/streams?cursor=${huge}`,
      `/platform/v2/sites/${f.site.id}/streams?previous=${huge}`,
    ]
    for (const url of platform) {
      const response = await t.request({ method: 'GET', url, headers: f.account.platform })
      expect(response.statusCode, `${url}: ${response.body}`).toBe(400)
      expect(response.json()).toMatchObject({ success: false, message: expect.stringMatching(/offset|cursor|previous/) as unknown })
    }
    const streams = await t.request({ method: 'GET', url: `/streams?page[offset]=${huge}`, headers: { ...f.account.bearer, accept: JSON_API } })
    expect(streams.statusCode, streams.body).toBe(400)
    expect(streams.json()).toMatchObject({ errors: [{ status: '400' }] })
  })
})
