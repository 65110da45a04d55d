// The text of a row that JSON.parse has taken: its scalars rewritten as strings, its names in order.

/**
 * Rewrites the scalar tokens of valid, flat JSON as strings: numbers keep the digits as written
 * (`10.50` stays "10.50", which JSON.parse would turn into 10.5), true becomes "1", false and
 * null become "". Strings are copied untouched. The input has already passed JSON.parse.
 */
export function stringifyScalars(json: string): string {
  let out = ''
  let copiedUpTo = 0
  let i = 0
  const length = json.length
  while (i < length) {
    const c = json.charCodeAt(i)
    if (c === 34 /* " */) {
      // Jump to the closing quote natively; a quote preceded by an odd run of backslashes is escaped.
      let close = json.indexOf('"', i + 1)
      while (close !== -1 && isEscaped(json, close)) close = json.indexOf('"', close + 1)
      i = close === -1 ? length : close + 1
      continue
    }
    let replacement: string | undefined
    let end = i
    if (c === 116 /* t */) {
      replacement = '"1"'
      end = i + 4
    } else if (c === 102 /* f */) {
      replacement = '""'
      end = i + 5
    } else if (c === 110 /* n */) {
      replacement = '""'
      end = i + 4
    } else if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      while (end < length && isNumberChar(json.charCodeAt(end))) end++
      replacement = `"${json.slice(i, end)}"`
    }
    if (replacement === undefined) {
      i++
      continue
    }
    out += json.slice(copiedUpTo, i) + replacement
    copiedUpTo = end
    i = end
  }
  return out + json.slice(copiedUpTo)
}

function isEscaped(text: string, quote: number): boolean {
  let backslashes = 0
  for (let k = quote - 1; text.charCodeAt(k) === 92; k--) backslashes++
  return backslashes % 2 === 1
}

function isNumberChar(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 45 || c === 43 || c === 46 || c === 101 || c === 69
}

/**
 * The member names of a flat JSON object's text (one that JSON.parse took), in order, each once:
 * the first string of each member is its name.
 */
export function namesInTextOrder(text: string): string[] {
  const names = new Set<string>()
  let atName = true
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 44 /* , */) atName = true
    if (c !== 34 /* " */) continue
    let close = text.indexOf('"', i + 1)
    while (close !== -1 && isEscaped(text, close)) close = text.indexOf('"', close + 1)
    if (close === -1) break
    if (atName) names.add(JSON.parse(text.slice(i, close + 1)) as string)
    atName = false
    i = close
  }
  return [...names]
}
