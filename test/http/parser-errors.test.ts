import { beforeAll, describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/test-app.js'
import { RawConnection } from '../stream-api/raw-http.js'
import { listenOnFreePort } from '../helpers/listen.js'

// Requests that Node's HTTP parser refuses before Fastify sees them still get the error body of the
// interface they were meant for, not Fastify's default `{"error":"Bad Request",...}`.
const t = useTestApp()
let port = 0

beforeAll(async () => {
  port = await listenOnFreePort(t.app)
})

async function send(raw: string) {
  const connection = await RawConnection.open(port)
  await connection.write(raw)
  return connection.response()
}

describe('requests the HTTP parser refuses', () => {
  it('answers a URL past 16 KB with 431 in the platform body, and in JSON:API on the stream interface', async () => {
    const long = 'a'.repeat(20_000)
    const platform = await send(`GET /platform/v2/sites/1/errors?filter=${long} HTTP/1.1\r\nHost: x\r\n\r\n`)
    expect(platform.statusCode).toBe(431)
    expect(JSON.parse(platform.body)).toEqual({ success: false, message: expect.stringMatching(/larger than 16 KB/) })
    // Named like every answer, though it never reached the app.
    expect(platform.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    const stream = await send(`GET /streams?x=${long} HTTP/1.1\r\nHost: x\r\n\r\n`)
    expect(stream.statusCode).toBe(431)
    expect(stream.headers['content-type']).toMatch(/^application\/vnd\.api\+json/)
    expect(JSON.parse(stream.body)).toEqual({ errors: [{ status: '431', title: 'Request Header Fields Too Large', detail: expect.stringMatching(/16 KB/) }] })
  })

  it('answers a broken Content-Length with 400 naming it, in the interface body', async () => {
    for (const head of ['Content-Length: abc', 'Content-Length: 5\r\nContent-Length: 6', 'Content-Length: 5\r\nTransfer-Encoding: chunked']) {
      const platform = await send(`POST /platform/v2/projects HTTP/1.1\r\nHost: x\r\n${head}\r\n\r\n{"name":"x"}`)
      expect(platform.statusCode, head).toBe(400)
      expect(JSON.parse(platform.body), head).toEqual({ success: false, message: expect.stringMatching(/not valid HTTP.*Content-Length/) })
      const stream = await send(`POST /streams/1/products HTTP/1.1\r\nHost: x\r\n${head}\r\n\r\n{"id":"1"}`)
      expect(stream.statusCode, head).toBe(400)
      expect(JSON.parse(stream.body), head).toEqual({ errors: [{ status: '400', title: 'Bad Request', detail: expect.stringMatching(/not valid HTTP/) }] })
    }
  })

  it('answers a console URL it cannot route or read with a console page, not the API body', async () => {
    const tooLong = await t.request({ method: 'GET', url: `/console/sites/${'7'.repeat(1100)}` })
    const undecodable = await t.request({ method: 'GET', url: '/console/sites/%E0%A4%A' })
    for (const [answer, status] of [
      [tooLong, 414],
      [undecodable, 400],
    ] as const) {
      expect(answer.statusCode).toBe(status)
      expect(answer.headers['content-type']).toMatch(/^text\/html/)
      expect(answer.body).toMatch(/^<!doctype html>/i)
      expect(answer.body).toMatch(/<p class="error" role="alert">[^<]+<\/p>/)
    }
    const parser = await send(`GET /console/products?filter=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`)
    expect(parser.statusCode).toBe(431)
    expect(parser.headers['content-type']).toMatch(/^text\/html/)
    expect(parser.body).toMatch(/^<!doctype html>[\s\S]*larger than 16 KB[\s\S]*Back to the overview/i)
  })

  it('answers a feed path past the parameter limit in the feed body', async () => {
    const response = await t.request({ method: 'GET', url: `/feeds/abc/${'a'.repeat(1100)}` })
    expect(response.statusCode).toBe(414)
    expect(response.json()).toEqual({ success: false, message: expect.any(String) })
  })
})
