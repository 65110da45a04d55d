// The README's walkthrough as data: the shell blocks marked ```sh walkthrough, split into the
// commands a shell runs, each with the comments written under it. A comment that starts with an
// HTTP status (`# 201 {"success":true,…}`) is what the command's curl answers: the status, then the
// body it prints, continued on comment lines indented by two or more spaces, `…` standing for
// anything (ids, timestamps, long parts). A shell script that runs every command in one bash and
// records, per command, its exit status, its output and the status of every curl it called.

/** The info string that marks a walkthrough block: ```sh walkthrough */
export const WALKTHROUGH_FENCE = /^\s*```sh walkthrough\s*$/

export interface WalkCommand {
  /** Position in the walkthrough, from 0. */
  index: number
  /** README line where it starts (1-based). */
  line: number
  /** The command as written, continuation lines included. */
  text: string
  /** Its trailing comments and the comment lines right under it, without their `#`. */
  comments: string[]
  /** The HTTP status its comment shows, if any. */
  status?: number
  /** The output its comment shows after the status ('' when none). */
  shown: string
}

/** The commands of every walkthrough block of a Markdown document, in order. */
export function walkthroughCommands(markdown: string): WalkCommand[] {
  const lines = markdown.split('\n')
  const commands: WalkCommand[] = []
  for (let i = 0; i < lines.length; i++) {
    if (!WALKTHROUGH_FENCE.test(lines[i] ?? '')) continue
    const indent = (lines[i] ?? '').indexOf('`')
    const block: { text: string; line: number }[] = []
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i] ?? ''); i++) block.push({ text: (lines[i] ?? '').slice(indent), line: i + 1 })
    if (i >= lines.length) throw new Error('a ```sh walkthrough block is not closed')
    for (const command of splitCommands(block)) commands.push({ ...command, index: commands.length })
  }
  return commands
}

type Context = 'command' | 'paren' | 'single' | 'double'

/** Splits shell text into top-level commands: quotes, $( … ), ( … ) and `\` continuations keep a command open. */
export function splitCommands(block: { text: string; line: number }[]): Omit<WalkCommand, 'index'>[] {
  const commands: Omit<WalkCommand, 'index'>[] = []
  let open: { lines: string[]; line: number; comments: string[] } | undefined
  let last: Omit<WalkCommand, 'index'> | undefined
  const stack: Context[] = ['command']
  for (const { text, line } of block) {
    if (!open) {
      const trimmed = text.trim()
      if (trimmed === '') {
        last = undefined
        continue
      }
      if (trimmed.startsWith('#')) {
        last?.comments.push(trimmed.slice(1))
        continue
      }
      open = { lines: [], line, comments: [] }
    }
    open.lines.push(text)
    const { comment, continued } = scanLine(text, stack)
    if (comment !== undefined) open.comments.push(comment)
    if (stack.length === 1 && !continued) {
      last = { line: open.line, text: open.lines.join('\n'), comments: open.comments, shown: '' }
      commands.push(last)
      open = undefined
    }
  }
  if (open) throw new Error(`the command at README line ${open.line} is not complete (an open quote or parenthesis?)`)
  return commands.map(withShownOutput)
}

/** Moves through one line, updating the stack of open quotes and parentheses. */
function scanLine(text: string, stack: Context[]): { comment?: string; continued: boolean } {
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]
    const top = stack[stack.length - 1]
    if (top === 'single') {
      if (ch === "'") stack.pop()
    } else if (top === 'double') {
      if (ch === '\\') i++
      else if (ch === '"') stack.pop()
      else if (ch === '$' && text[i + 1] === '(') {
        stack.push('paren')
        i++
      }
    } else if (ch === '\\') {
      if (i === text.length - 1) return { continued: true }
      i++
    } else if (ch === "'") stack.push('single')
    else if (ch === '"') stack.push('double')
    else if (ch === '(') stack.push('paren')
    else if (ch === ')' && top === 'paren') stack.pop()
    else if (ch === '#' && (i === 0 || /[\s;|&(]/.test(text[i - 1] ?? ''))) {
      return { comment: text.slice(i + 1), continued: false }
    }
  }
  const inCode = stack[stack.length - 1] === 'command' || stack[stack.length - 1] === 'paren'
  return { continued: inCode && /(\|\||&&|\|)\s*$/.test(text) }
}

function withShownOutput(command: Omit<WalkCommand, 'index'>): Omit<WalkCommand, 'index'> {
  const at = command.comments.findIndex((comment) => /^\s*\d{3}(\s|$)/.test(comment))
  if (at < 0) return command
  const first = command.comments[at] ?? ''
  const status = Number(first.trim().slice(0, 3))
  const parts = [first.trim().slice(3)]
  for (const comment of command.comments.slice(at + 1)) {
    if (!/^ {2,}\S/.test(comment)) break
    parts.push(comment.trim())
  }
  return { ...command, status, shown: parts.join('').trim() }
}

/**
 * Whether `actual` is what `shown` shows: equal once all whitespace is removed from both, where
 * each `…` in `shown` stands for anything.
 */
export function matchesShown(actual: string, shown: string): boolean {
  const squash = (text: string) => text.replace(/\s+/g, '')
  const real = squash(actual)
  const parts = squash(shown).split('…')
  if (parts.length === 1) return real === parts[0]
  const first = parts[0] ?? ''
  const end = parts[parts.length - 1] ?? ''
  if (!real.startsWith(first) || !real.endsWith(end) || real.length < first.length + end.length) return false
  let from = first.length
  for (const part of parts.slice(1, -1)) {
    const found = real.indexOf(part, from)
    if (found < 0 || found + part.length > real.length - end.length) return false
    from = found + part.length
  }
  return true
}

export interface CommandResult {
  exitStatus: number | undefined
  /** Its stdout and stderr, as they came. */
  output: string
  /** The HTTP status of every curl it called, in order (0 when curl got no answer). */
  curlStatuses: number[]
}

/** Starts each command's record; the marker is unlikely in any output. */
const MARK = '@@walkthrough'

/**
 * One bash script that runs the commands in order in one shell, with `curl` wrapped to record the
 * status of each call and `npx catalog-platform` running the checkout's built CLI (what the
 * package's `bin` runs; test/global-setup.ts builds it). `rewrite` adapts a command's text (the server's address).
 */
export function walkthroughScript(commands: WalkCommand[], repoRoot: string, rewrite: (text: string) => string): string {
  const prelude = [
    'exec 2>&1',
    `curl() { local headers; headers=$(mktemp); command curl -D "$headers" "$@"; local rc=$?`,
    `  echo "${MARK} curl $(awk '/^HTTP\\//{code=$2} END{print code+0}' "$headers")" >> "$WALK_LOG"; rm -f "$headers"; return $rc; }`,
    `npx() { if [ "$1" = catalog-platform ]; then shift; (cd ${shellQuote(repoRoot)} && node dist/src/main.js "$@"); else command npx "$@"; fi; }`,
  ]
  const body = commands.flatMap((command) => [
    `echo "${MARK} command ${command.index}" >> "$WALK_LOG"; printf '\\n${MARK} command ${command.index}\\n'`,
    rewrite(command.text),
    `echo "${MARK} exit ${command.index} $?" >> "$WALK_LOG"`,
  ])
  return [...prelude, ...body, ''].join('\n')
}

/** Each command's exit status, output and curl statuses, from the script's output and its log. */
export function commandResults(commands: WalkCommand[], output: string, log: string): CommandResult[] {
  const results: CommandResult[] = commands.map(() => ({ exitStatus: undefined, output: '', curlStatuses: [] }))
  let current: CommandResult | undefined
  for (const line of log.split('\n')) {
    const [mark, kind, first, second] = line.split(' ')
    if (mark !== MARK) continue
    if (kind === 'command') current = results[Number(first)]
    else if (kind === 'curl') current?.curlStatuses.push(Number(first))
    else if (kind === 'exit') {
      const result = results[Number(first)]
      if (result) result.exitStatus = Number(second)
    }
  }
  const pieces = output.split(new RegExp(`\\n?${MARK} command (\\d+)\\n`))
  for (let i = 1; i < pieces.length; i += 2) {
    const result = results[Number(pieces[i])]
    if (result) result.output = pieces[i + 1] ?? ''
  }
  return results
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`
}
