import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/test-app.js'
import { client, createProject, createSite } from '../helpers/clients.js'
import { expectError, only, type ProjectJson } from '../helpers/responses.js'

// Platform bodies come compressed from some clients: the official PHP client sends raw deflate
// labelled `Content-Encoding: gzip`. They are decoded with the limits of uncompressed bodies.
const t = useTestApp()

const json = (value: unknown) => Buffer.from(JSON.stringify(value))

async function post(xAuthToken: string, url: string, body: Buffer, encoding?: string) {
  return t.request({
    method: 'POST',
    url,
    headers: { 'x-auth-token': xAuthToken, 'content-type': 'application/json', ...(encoding === undefined ? {} : { 'content-encoding': encoding }) },
    payload: body,
  })
}

describe('compressed platform bodies', () => {
  it.each([
    ['gzip', 'gzip', gzipSync],
    ['x-gzip', 'x-gzip', gzipSync],
    ['zlib deflate', 'deflate', deflateSync],
    ['raw deflate', 'deflate', deflateRawSync],
    ['raw deflate labelled gzip (the PHP client)', 'gzip', deflateRawSync],
    ['gzip with identity listed', 'identity, gzip', gzipSync],
  ])('decodes a %s body', async (_name, encoding, compress) => {
    const c = await client(t)
    const response = await post(c.account.xAuthToken, '/platform/v2/projects', compress(json({ name: `Packed ${encoding}` })), encoding)
    expect(response.statusCode, response.body).toBe(201)
    expect(only(response.json<{ Projects: ProjectJson[] }>().Projects).name).toBe(`Packed ${encoding}`)
  })

  it('answers an undecodable body with a 400 that says so, and writes nothing', async () => {
    const c = await client(t)
    for (const encoding of ['gzip', 'deflate']) {
      expectError(
        await post(c.account.xAuthToken, '/platform/v2/projects', Buffer.from('{"name":"plain"}'), encoding),
        400,
        new RegExp(`labelled Content-Encoding: ${encoding} but does not decode`),
      )
      const truncated = gzipSync(json({ name: 'cut' })).subarray(0, 12)
      expectError(await post(c.account.xAuthToken, '/platform/v2/projects', truncated, encoding), 400, /does not decode/)
    }
    expectError(await post(c.account.xAuthToken, '/platform/v2/projects', gzipSync('{"name":'), 'gzip'), 400, /^Malformed JSON body/)
    expect((await c.get('/projects')).json<{ Projects: ProjectJson[] }>().Projects).toEqual([])
  })

  it('refuses text that is no Unicode (a lone surrogate, bytes that are no UTF-8) naming the field, instead of storing U+FFFD', async () => {
    const c = await client(t)
    expectError(
      await post(c.account.xAuthToken, '/platform/v2/projects', Buffer.from('{"name":"ab\\ud800"}')),
      400,
      /^name: must not contain a lone UTF-16 surrogate/,
    )
    expectError(
      await post(c.account.xAuthToken, '/platform/v2/projects', Buffer.from('{"name":"\\udc00x"}')),
      400,
      /^name: must not contain a lone UTF-16 surrogate/,
    )
    expectError(
      await post(c.account.xAuthToken, '/platform/v2/projects', Buffer.from([...Buffer.from('{"name":"a'), 0xff, 0xfe, ...Buffer.from('"}')])),
      400,
      'The body is not valid UTF-8 text',
    )
    const pair = await post(c.account.xAuthToken, '/platform/v2/projects', Buffer.from('{"name":"\\ud83d\\ude00 shop"}'))
    expect(only(pair.json<{ Projects: ProjectJson[] }>().Projects).name).toBe('\u{1F600} shop')
    expect((await c.get('/projects')).json<{ Projects: ProjectJson[] }>().Projects.map((p) => p.name)).toEqual(['\u{1F600} shop'])
  })

  it('refuses an unknown encoding with 415 and a body that inflates past the limit with 413', async () => {
    const c = await client(t)
    expectError(await post(c.account.xAuthToken, '/platform/v2/projects', json({ name: 'x' }), 'br'), 415, /Content-Encoding br is not supported/)
    // 2 MB of blanks after the object: well-formed JSON, a few kilobytes compressed.
    const bomb = gzipSync(Buffer.concat([json({ name: 'bomb' }), Buffer.alloc(2 * 1024 * 1024, 0x20)]))
    expect(bomb.length).toBeLessThan(64 * 1024)
    expectError(await post(c.account.xAuthToken, '/platform/v2/projects', bomb, 'gzip'), 413, /larger than 1048576 bytes \(after decompression\)/)
    expect((await c.get('/projects')).json<{ Projects: ProjectJson[] }>().Projects).toEqual([])
  })

  it('decodes gzip bodies of the stream interface documents too', async () => {
    const c = await client(t)
    const response = await t.request({
      method: 'POST',
      url: '/streams',
      headers: { ...c.account.bearer, 'content-type': 'application/vnd.api+json', 'content-encoding': 'gzip' },
      payload: gzipSync(json({ data: { type: 'stream', attributes: { name: 'packed', type: 'chunked' } } })),
    })
    expect(response.statusCode, response.body).toBe(201)
    expect(response.json<{ data: { attributes: { name: string } } }>().data.attributes.name).toBe('packed')
  })
})

describe('withdrawn product write endpoints', () => {
  it.each([
    ['raw deflate labelled gzip', { 'content-encoding': 'gzip' }, deflateRawSync(json({ products: [{ id: 'a' }] }))],
    ['a body that is no JSON', { 'content-type': 'application/json' }, Buffer.from('not json at all')],
    ['an unknown encoding', { 'content-encoding': 'br' }, Buffer.from('xx')],
    ['a body over the JSON limit', { 'content-type': 'application/json' }, Buffer.alloc(3 * 1024 * 1024, 0x20)],
  ])('answer 410 whatever the body: %s', async (_name, headers, body) => {
    const c = await client(t)
    const site = await createSite(c, { title: 'S', project_id: (await createProject(c)).id })
    for (const step of ['upload', 'commit', 'discard']) {
      for (const method of ['PATCH', 'OPTIONS'] as const) {
        const other = await t.request({
          method,
          url: `/platform/v2/sites/${site.id}/products/7/${step}`,
          headers: { ...c.account.platform, ...headers },
          payload: body,
        })
        expectError(other, 410, /withdrawn.*stream interface/)
      }
      const response = await t.request({
        method: 'POST',
        url: `/platform/v2/sites/${site.id}/products/7/${step}`,
        headers: { ...c.account.platform, ...headers },
        payload: body,
      })
      expectError(response, 410, /withdrawn.*stream interface/)
    }
  })
})

describe('the front door', () => {
  it('sends a browser that opens the server to the interactive reference', async () => {
    for (const method of ['GET', 'HEAD'] as const) {
      const response = await t.request({ method, url: '/', headers: { accept: 'text/html' } })
      expect(response.statusCode).toBe(302)
      expect(response.headers.location).toBe('/docs')
    }
    const docs = await t.request({ method: 'GET', url: '/docs/' })
    expect(docs.statusCode).toBe(200)
    expect(docs.headers['content-type']).toMatch(/text\/html/)
  })
})
