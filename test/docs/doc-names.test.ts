import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// The docs name code: files (`src/jobs/run-queue.ts`) and the functions in ARCHITECTURE.md's
// tables (`siteDashboard`). This keeps those names true: every file a doc names exists, and every
// function or class ARCHITECTURE.md names is declared in the code. A rename that leaves a doc
// behind fails here.

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const DOCS = [
  'README.md',
  'ARCHITECTURE.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
]
const TOP = ['src', 'test', 'bench', 'migrations', 'docs', 'deploy', 'bin', '.ci']

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8')

/** Paths in backticks that start at one of the repository's folders, without a glob or a placeholder. */
function namedPaths(text: string): string[] {
  const found = new Set<string>()
  for (const [, code] of text.matchAll(/`([^`\s]+)`/g)) {
    const candidate = code!.replace(/[.,:;)]+$/, '').replace(/:\d+$/, '')
    if (!TOP.some((top) => candidate.startsWith(`${top}/`))) continue
    if (/[*{}<>…]/.test(candidate)) continue
    found.add(candidate)
  }
  return [...found]
}

/** Every declared name in src: functions, classes, constants, types and interfaces. */
function declaredNames(): Set<string> {
  const names = new Set<string>()
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const full = path.join(dir, entry)
      if (statSync(full).isDirectory()) walk(full)
      else if (entry.endsWith('.ts')) {
        const text = readFileSync(full, 'utf8')
        for (const [, name] of text.matchAll(/(?:function\*?|class|const|let|interface|type)\s+([A-Za-z_$][\w$]*)/g)) names.add(name!)
        // Methods of classes and object literals: `name(` at the start of a line.
        for (const [, name] of text.matchAll(/^\s+(?:async\s+|static\s+|private\s+|readonly\s+)*([a-z][\w$]*)\s*[(<]/gm)) names.add(name!)
      }
    }
  }
  walk(path.join(ROOT, 'src'))
  return names
}

/** The functions ARCHITECTURE.md's tables name: backticked camelCase words of their domain and storage columns. */
function tableFunctions(): string[] {
  const found = new Set<string>()
  for (const line of read('ARCHITECTURE.md').split('\n')) {
    if (!line.startsWith('| ')) continue
    const cells = line.split('|').slice(2)
    for (const cell of cells) {
      for (const [, code] of cell.matchAll(/`([^`]+)`/g)) {
        const name = code!.replace(/\(\)$/, '')
        if (/^[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*$/.test(name)) found.add(name)
      }
    }
  }
  return [...found]
}

describe('the names the docs give', () => {
  it('are files and folders that exist', () => {
    const missing = DOCS.flatMap((doc) => namedPaths(read(doc)).flatMap((named) => (existsSync(path.join(ROOT, named)) ? [] : [`${doc}: ${named}`])))
    expect(missing).toEqual([])
  })

  it('in ARCHITECTURE.md tables are declared in the code', () => {
    const declared = declaredNames()
    const names = tableFunctions()
    expect(names.length).toBeGreaterThan(50)
    expect(names.filter((name) => !declared.has(name))).toEqual([])
  })
})
