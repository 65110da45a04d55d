import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { platformOperations } from '../../src/platform-api/openapi-docs.js'
import { streamOperations } from '../../src/stream-api/openapi-docs.js'
import { useTestApp } from '../helpers/test-app.js'

// The API reference (/docs, /openapi.json) as a person trying it out meets it: the document passes
// `redocly lint` with the recommended rules, every operation is described, its examples fit its
// schemas, and its security says which credential the server checks, so that "Try it out" sends it.

const t = useTestApp()
const run = promisify(execFile)
const REDOCLY = path.resolve('node_modules/.bin/redocly')

interface Problem {
  ruleId: string
  severity: 'error' | 'warn'
  message: string
  location: { pointer?: string }[]
}
interface Operation {
  operationId?: string
  summary?: string
  description?: string
  security?: Record<string, string[]>[]
  requestBody?: { required?: boolean; content?: Record<string, unknown> }
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>
  components: { securitySchemes: Record<string, { type: string; scheme?: string; name?: string; description?: string }> }
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options'])
const document = () => t.app.swagger() as unknown as OpenApiDocument
const operations = () =>
  Object.entries(document().paths).flatMap(([url, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, operation]) => ({ key: `${method.toUpperCase()} ${url}`, url, operation })),
  )

let workDir: string | undefined
afterAll(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true })
})

/**
 * `redocly lint --extends recommended --format json` on the document, offline: no telemetry, no
 * update check, no config file of the repository (it runs in a directory of its own).
 */
async function lint(): Promise<{ problems: Problem[]; command: string }> {
  workDir = await mkdtemp(path.join(tmpdir(), 'openapi-lint-'))
  const file = path.join(workDir, 'openapi.json')
  await writeFile(file, JSON.stringify(t.app.swagger(), null, 2))
  const args = ['lint', '--extends', 'recommended', '--format', 'json', '--max-problems', '1000', file]
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' }
  // Exit code 1 when there are errors: the JSON report is on stdout either way.
  const { stdout } = await run(REDOCLY, args, { cwd: workDir, env, maxBuffer: 64 * 1024 * 1024 }).catch((error: { stdout?: string }) => ({
    stdout: error.stdout ?? '',
  }))
  // Notices (Node.js versions) go to stderr; stdout is the report alone.
  const report = JSON.parse(stdout) as { problems: Problem[] }
  return { problems: report.problems, command: `redocly ${args.join(' ')}` }
}

const show = (problems: Problem[]) => problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`).join('\n')

describe('the OpenAPI document', () => {
  it('passes redocly lint with the recommended rules, its examples fitting their schemas', async () => {
    const { problems, command } = await lint()
    const errors = problems.filter((p) => p.severity === 'error')
    const warnings = problems.filter((p) => p.severity === 'warn')
    console.log(`${command}: ${errors.length} errors, ${warnings.length} warnings${warnings.length ? `\n${show(warnings)}` : ''}`)
    expect(show(errors)).toBe('')
    // An example that does not fit its schema would mislead whoever copies it.
    expect(show(warnings.filter((p) => /^no-invalid-.*examples$/.test(p.ruleId)))).toBe('')
  }, 60_000)

  it('describes every operation, and every documented operation exists', () => {
    const all = operations()
    expect(all.length).toBeGreaterThan(60)
    const undescribed = all.filter(({ operation }) => !operation.summary || !operation.description || !operation.operationId).map(({ key }) => key)
    expect(undescribed).toEqual([])
    const ids = new Set(all.map(({ operation }) => operation.operationId))
    const orphans = Object.keys({ ...platformOperations, ...streamOperations }).filter((id) => !ids.has(id))
    expect(orphans).toEqual([])
  })

  it('states the credentials each operation takes, as the server checks them', () => {
    const both = [{ 'X-Auth-Token': [] }, { PersonalAccessToken: [] }]
    const expected = (url: string) => {
      if (url === '/healthz' || url.startsWith('/feeds/')) return []
      if (url.startsWith('/streams')) return [{ PersonalAccessToken: [] }]
      if (/^\/platform\/v2\/(process\/|sites\/\{siteId\}\/streams|webhooks)/.test(url)) return both
      return [{ 'X-Auth-Token': [] }]
    }
    const wrong = operations()
      .filter(({ url, operation }) => JSON.stringify(operation.security) !== JSON.stringify(expected(url)))
      .map(({ key, operation }) => `${key}: ${JSON.stringify(operation.security)}`)
    expect(wrong).toEqual([])
    expect(document().paths['/metrics']).toBeUndefined()
    const schemes = document().components.securitySchemes
    expect(schemes['X-Auth-Token']).toMatchObject({ type: 'apiKey', name: 'X-Auth-Token' })
    expect(schemes.PersonalAccessToken).toMatchObject({ type: 'http', scheme: 'bearer' })
    for (const scheme of Object.values(schemes)) expect(scheme.description).toMatch(/catalog-platform/)
  })

  it('documents the upload bodies the upload routes read themselves', () => {
    const products = document().paths['/streams/{streamId}/products'] ?? {}
    for (const method of ['post', 'put', 'patch']) {
      expect(Object.keys(products[method]?.requestBody?.content ?? {}), method).toEqual(['application/x-ndjson', 'application/json'])
      expect(products[method]?.requestBody?.required).toBe(true)
    }
    expect(new Set(['post', 'put', 'patch'].map((m) => products[m]?.operationId)).size).toBe(3)
    expect(Object.keys(products.delete?.requestBody?.content ?? {})).toEqual(['application/x-ndjson'])
    expect(products.delete?.requestBody?.required).toBe(false)
  })

  it('lets "Try it out" list with the credential each operation documents', async () => {
    const account = await t.account('Docs')
    const headers: Record<string, Record<string, string>> = {
      'X-Auth-Token': { 'x-auth-token': account.xAuthToken },
      PersonalAccessToken: { authorization: `Bearer ${account.token}` },
    }
    for (const url of ['/platform/v2/projects', '/platform/v2/sites', '/platform/v2/webhooks', '/streams']) {
      const requirements = document().paths[url]?.get?.security ?? []
      expect(requirements.length, url).toBeGreaterThan(0)
      // Each alternative alone is enough, as Swagger UI sends the one the user authorized.
      for (const requirement of requirements) {
        const sent = Object.assign({}, ...Object.keys(requirement).map((name) => headers[name])) as Record<string, string>
        const response = await t.request({ method: 'GET', url, headers: sent })
        expect(response.statusCode, `${url} with ${Object.keys(requirement).join('+')}`).toBe(200)
      }
    }
  })
})
