/**
 * Every route Fastify knows, from `printRoutes({ commonPrefix: false })`: a tree whose lines are
 * `<indent>├── <path segment> (METHODS)`, four characters of indent per level.
 */
export function registeredRoutes(tree: string): { method: string; path: string }[] {
  const routes: { method: string; path: string }[] = []
  const stack: string[] = []
  for (const line of tree.split('\n')) {
    const match = /^((?:[│ ] {3})*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line)
    if (!match) continue
    const depth = (match[1] ?? '').length / 4
    stack.length = depth
    stack.push(match[2] ?? '')
    const path = stack.join('')
    for (const method of (match[3] ?? '').split(', ').filter(Boolean)) routes.push({ method, path })
  }
  return routes
}
