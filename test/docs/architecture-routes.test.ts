import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { registeredRoutes } from '../helpers/registered-routes.js'
import { useTestApp } from '../helpers/test-app.js'

// ARCHITECTURE.md's tables trace every endpoint to its route, domain function and SQL. This keeps
// their first column equal to the routes the app registers, both ways: every route is named by a
// row, and every path a row names is a route.

const t = useTestApp()

/**
 * The backticked paths of the first column of ARCHITECTURE.md's endpoint tables, each with where a
 * leading `…` stands: below /console in the console's table, anywhere else in the other.
 */
function documentedPaths(): { path: string; console: boolean }[] {
  const text = readFileSync(new URL('../../ARCHITECTURE.md', import.meta.url), 'utf8')
  const paths: { path: string; console: boolean }[] = []
  let table = -1
  for (const line of text.split('\n')) {
    if (line.startsWith('| endpoint ')) table++
    if (!line.startsWith('| ')) continue
    const first = line.split('|')[1] ?? ''
    for (const [, code] of first.matchAll(/`([^`]+)`/g)) {
      const path = code!.replace(/^(?:GET|POST|PUT|PATCH|DELETE|HEAD)(?:,? )?/, '').trim()
      if (path.startsWith('/') || path.startsWith('…')) paths.push({ path, console: table === 1 })
    }
  }
  return paths
}

/**
 * A documented path as a pattern of registered paths: `…` is any text, `{name}` one segment,
 * `{a,b}` one of its words or a segment, `[…]` optional, a query left out.
 */
function patternOf({ path: documented, console }: { path: string; console: boolean }): RegExp {
  let source = ''
  const path = documented.replace(/\?.*$/, '')
  if (path.startsWith('…')) source = console ? '/console' : '(?!/console)'
  for (let i = 0; i < path.length; i++) {
    const c = path[i]!
    if (c === '…') source += '.*'
    else if (c === '[') source += '(?:'
    else if (c === ']') source += ')?'
    else if (c === '{') {
      const end = path.indexOf('}', i)
      const words = path.slice(i + 1, end).split(',')
      source += words.length > 1 ? `(?:${words.map(escape).join('|')}|:[^/]+)` : '[^/]+'
      i = end
    } else source += escape(c)
  }
  return new RegExp(`^${source}$`)
}

function escape(text: string): string {
  return text.replace(/[.*+?^$()|\\/]/g, '\\$&')
}

describe('ARCHITECTURE.md', () => {
  it('names every registered route, and every path it names is registered', () => {
    const routes = [...new Set(registeredRoutes(t.app.printRoutes({ commonPrefix: false })).map((route) => route.path))]
      // The API reference's own assets, served by its plugin under /docs.
      .filter((path) => !path.startsWith('/docs/') && path !== '/docs*')
    const documented = documentedPaths().map((entry) => ({ path: entry.path, pattern: patternOf(entry) }))
    expect(documented.length).toBeGreaterThan(40)
    const unnamed = routes.filter((route) => !documented.some(({ pattern }) => pattern.test(route)))
    expect(unnamed, 'routes no row of ARCHITECTURE.md names').toEqual([])
    const stale = documented.filter(({ pattern }) => !routes.some((route) => pattern.test(route))).map(({ path }) => path)
    expect(stale, 'paths of ARCHITECTURE.md that are no route').toEqual([])
  })
})
