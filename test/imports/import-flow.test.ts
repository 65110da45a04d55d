import { describe, expect, it } from 'vitest'
import { HIGH_LIMITS, useTestApp } from '../helpers/test-app.js'
import { importFixture } from '../helpers/factories.js'

const t = useTestApp({ ...HIGH_LIMITS, RUN_POLL_SECONDS: '0.5', SCHEDULER_INTERVAL_SECONDS: '0' })

describe('upload → process → status → stage', () => {
  it('imports the uploaded rows into the site stage and records the run', async () => {
    const f = await importFixture(t)
    const stream = await f.createStream()
    await f.attach(stream)
    const upload = await f.upload(stream, [
      { id: 'A', title: 'Shirt', price: 10.5 },
      { id: 'B', title: 'Shoe', colour: 'red' },
    ])
    expect(upload.statusCode).toBe(202)
    const run = await f.run('import')
    expect(run.status, run.message).toBe('success')
    const stage = await f.stage()
    expect(stage.columns).toEqual(['id', 'title', 'price', 'colour'])
    expect(stage.rows).toEqual([
      { id: 'A', title: 'Shirt', price: '10.5' },
      { id: 'B', title: 'Shoe', colour: 'red' },
    ])
  })
})
