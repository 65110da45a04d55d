import { describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/test-app.js'

const t = useTestApp({ SCHEDULER_INTERVAL_SECONDS: '0' })

// A URL whose percent-encoding does not decode fails before any route is found: it still gets the
// error body of its interface, never Fastify's default.
describe('URLs that do not decode', () => {
  it('answer 400 in the platform error body', async () => {
    const response = await t.request({ method: 'GET', url: '/platform/v2/sites/%E0%A4%A' })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toEqual({ success: false, message: expect.stringMatching(/URL is not valid/) })
  })

  it('answer 400 as a JSON:API error on the stream interface', async () => {
    const response = await t.request({ method: 'DELETE', url: '/streams/1/products/%ED%A0%80' })
    expect(response.statusCode).toBe(400)
    expect(response.headers['content-type']).toMatch(/application\/vnd\.api\+json/)
    expect(response.json()).toEqual({ errors: [{ status: '400', title: 'Bad Request', detail: expect.stringMatching(/URL is not valid/) }] })
  })
})
