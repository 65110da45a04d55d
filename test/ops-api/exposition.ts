// A strict reader of the Prometheus text format (what Prometheus itself accepts), for the metrics tests.

export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)",?/gy

/** Every sample of a Prometheus text exposition; a line that is neither a sample nor HELP/TYPE fails the test. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || /^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* /.test(line)) continue
    const match = SAMPLE_LINE.exec(line)
    if (!match) throw new Error(`not a line of the Prometheus text format: ${line}`)
    const [, name = '', labelText = '', value = ''] = match
    const labels: Record<string, string> = {}
    let read = 0
    for (const label of labelText.matchAll(LABEL)) {
      labels[label[1] ?? ''] = (label[2] ?? '').replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
      read = (label.index ?? 0) + label[0].length
    }
    if (read !== labelText.length) throw new Error(`labels that do not parse: ${line}`)
    const number = sampleValue(value)
    if (number === undefined) throw new Error(`not a sample value: ${line}`)
    samples.push({ name, labels, value: number })
  }
  return samples
}

/** A sample value as Prometheus reads it (Go's ParseFloat): a number, or NaN and ±Inf in any case (prom-client writes `Nan`). */
function sampleValue(text: string): number | undefined {
  if (/^nan$/i.test(text)) return NaN
  const infinity = /^([+-]?)inf(inity)?$/i.exec(text)
  if (infinity) return infinity[1] === '-' ? -Infinity : Infinity
  const number = Number(text)
  return text.trim() === '' || Number.isNaN(number) ? undefined : number
}

export interface Scrape {
  text: string
  samples: Sample[]
  /** The sum of the samples of `name` whose labels include `labels`. */
  value(name: string, labels?: Record<string, string>): number
}

/** A scrape's samples, with the sums the tests compare. */
export function readExposition(text: string): Scrape {
  const samples = parseExposition(text)
  const value = (name: string, labels: Record<string, string> = {}) =>
    samples
      .filter((sample) => sample.name === name && Object.entries(labels).every(([key, want]) => sample.labels[key] === want))
      .reduce((sum, sample) => sum + sample.value, 0)
  return { text, samples, value }
}
