import { describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/test-app.js'
import { client, createProject, createSite, readSite, type Client } from '../helpers/clients.js'
import { expectError, sitesOf, type ProjectJson } from '../helpers/responses.js'

const t = useTestApp()

async function withProject(): Promise<{ c: Client; project: ProjectJson }> {
  const c = await client(t)
  return { c, project: await createProject(c) }
}

/** Posts an invalid create, checks the error, and checks that no site was made. */
async function refuseCreate(c: Client, body: Record<string, unknown>, status: number, message: RegExp, path = '/sites') {
  const before = sitesOf(await c.get('/sites')).length
  expectError(await c.post(path, body), status, message)
  expect(sitesOf(await c.get('/sites'))).toHaveLength(before)
}

describe('site create validation', () => {
  it.each([
    ['missing', {}, /^title: is required/],
    ['null', { title: null }, /^title: /],
    ['empty', { title: '' }, /^title: must not be empty/],
    ['blank', { title: '  ' }, /^title: must not be empty/],
  ])('refuses a %s title', async (_case, body, message) => {
    const { c, project } = await withProject()
    await refuseCreate(c, { project_id: project.id, ...body }, 400, message)
  })

  it.each(['paused', 'ACTIVE', 'enabled', ''])('refuses status %j, naming the three values', async (status) => {
    const { c, project } = await withProject()
    await refuseCreate(c, { title: 'S', project_id: project.id, status }, 400, /^status: must be one of active, paused_upload, disabled/)
  })

  it.each(['active', 'paused_upload', 'disabled'])('accepts status %s', async (status) => {
    const { c, project } = await withProject()
    expect((await createSite(c, { title: 'S', project_id: project.id, status })).status).toBe(status)
  })

  it.each([
    ['missing', undefined, /^project_id: is required/],
    ['not a number', 'abc', /^project_id: must be a positive integer/],
    ['zero', 0, /^project_id: must be a positive integer/],
    ['beyond the id range', '9223372036854775808', /^project_id: must be a positive integer/],
    ['unknown', 999999, /^project_id: no project 999999 in this account/],
  ])('refuses a project_id that is %s', async (_case, projectId, message) => {
    const { c } = await withProject()
    await refuseCreate(c, { title: 'S', project_id: projectId }, 400, message)
  })

  it("refuses another account's project as project_id", async () => {
    const { c } = await withProject()
    const foreign = await createProject(await client(t, 'Other'), 'Foreign')
    await refuseCreate(c, { title: 'S', project_id: foreign.id }, 400, /^project_id: no project \d+ in this account/)
  })

  it('refuses a body project_id that differs from the project in the path', async () => {
    const { c, project } = await withProject()
    const other = await createProject(c, 'Other')
    await refuseCreate(c, { title: 'S', project_id: other.id }, 400, /^project_id: must match the project in the path/, `/projects/${project.id}/sites`)
  })

  it.each([
    ['id', { id: 7 }, /^id: must be empty on create/],
    ['created_at', { created_at: '2024-01-01 00:00:00' }, /^created_at: must be empty on create/],
  ])('refuses %s on create', async (_case, extra, message) => {
    const { c, project } = await withProject()
    await refuseCreate(c, { title: 'S', project_id: project.id, ...extra }, 400, message)
  })

  it.each(['erp', ':1', 'erp:', ':'])('refuses reference %j that is not <tagName>:<tagValue>', async (reference) => {
    const { c, project } = await withProject()
    await refuseCreate(c, { title: 'S', project_id: project.id, reference }, 400, /^reference: must have the form <tagName>:<tagValue>/)
  })

  it('refuses a reference already used in the account with 409, and allows it in another account', async () => {
    const { c, project } = await withProject()
    const first = await createSite(c, { title: 'First', project_id: project.id, reference: 'erp:1' })
    await refuseCreate(c, { title: 'Second', project_id: project.id, reference: 'erp:1' }, 409, /^reference: erp:1 is already used/)
    expect(sitesOf(await c.get('/sites/erp:1')).map((s) => s.id)).toEqual([first.id])

    const other = await withProject()
    await createSite(other.c, { title: 'Elsewhere', project_id: other.project.id, reference: 'erp:1' })
  })
})

describe('site update validation', () => {
  it("refuses invalid fields and another account's project, leaving the site as it was", async () => {
    const { c, project } = await withProject()
    const site = await createSite(c, { title: 'S', project_id: project.id, import_schedule: 'H 3 * * *' })
    const foreign = await createProject(await client(t, 'Other'), 'Foreign')
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ title: '' }, /^title: must not be empty/],
      [{ status: 'paused' }, /^status: must be one of/],
      [{ project_id: foreign.id }, /^project_id: no project/],
      [{ project_id: 'abc' }, /^project_id: must be a positive integer/],
      [{ import_schedule: '0 H * * *' }, /^import_schedule: line 1 /],
    ]
    for (const [body, message] of cases) expectError(await c.put(`/sites/${site.id}`, body), 400, message)
    expect(await readSite(c, site.id)).toEqual(site)
  })
})

describe('import_schedule', () => {
  it.each([
    '',
    '0 3 * * *',
    'H 3 * * *',
    'h 3 * * 1-5',
    '*/15 * * * *',
    'TZ=Europe/Berlin\nH 3 * * *',
    'TZ=America/New_York\nH 3 * * *\n30 18 * * 1-5',
    'H 3 * * *\n\n0 12 1 1 *',
  ])('accepts %j and returns it', async (schedule) => {
    const { c, project } = await withProject()
    const site = await createSite(c, { title: 'S', project_id: project.id, import_schedule: schedule })
    expect(site.import_schedule).toBe(schedule)
    expect((await readSite(c, site.id)).import_schedule).toBe(schedule)
  })

  it.each([
    ['an unknown zone', 'TZ=Mars/Olympus\nH 3 * * *', /^import_schedule: line 1 "TZ=Mars\/Olympus": unknown time zone/],
    ['an empty zone', 'TZ=\nH 3 * * *', /^import_schedule: line 1 "TZ=": unknown time zone/],
    ['a TZ line after a cron line', 'H 3 * * *\nTZ=UTC', /^import_schedule: line 2 "TZ=UTC": TZ= is only allowed as the first line/],
    ['a TZ line alone', 'TZ=Europe/Berlin', /^import_schedule: a TZ= line must be followed by at least one cron line/],
    ['four fields', '0 3 * *', /^import_schedule: line 1 "0 3 \* \*": a cron line needs exactly five fields/],
    ['six fields', 'H 3 * * *\n0 0 3 * * *', /^import_schedule: line 2 "0 0 3 \* \* \*": a cron line needs exactly five fields/],
    ['a macro', '@daily', /^import_schedule: line 1 "@daily": a cron line needs exactly five fields/],
    ['H in the hour', 'H 3 * * *\n0 H * * *', /^import_schedule: line 2 "0 H \* \* \*": H is only allowed in the minute field/],
    ['H in the day', '0 0 H * *', /^import_schedule: line 1 "0 0 H \* \*": H is only allowed in the minute field/],
    ['H in the weekday', 'TZ=UTC\n0 0 * * H', /^import_schedule: line 2 "0 0 \* \* H": H is only allowed in the minute field/],
    ['a minute out of range', 'TZ=UTC\nH 3 * * *\n61 * * * *', /^import_schedule: line 3 "61 \* \* \* \*": not a valid cron expression/],
    ['an hour out of range', '0 24 * * *', /^import_schedule: line 1 "0 24 \* \* \*": not a valid cron expression/],
    ['a date that never comes', 'TZ=Pacific/Chatham\n5 3 31 9 *', /^import_schedule: line 2 "5 3 31 9 \*": fires less than once a year/],
  ])('refuses %s, naming the line', async (_case, schedule, message) => {
    const { c, project } = await withProject()
    await refuseCreate(c, { title: 'S', project_id: project.id, import_schedule: schedule }, 400, message)
  })
})

describe('import_schedule bounds (issue 10, finding 2)', () => {
  // 70,000 valid lines, 0.8 MB: once stored, every scheduler pass spent seconds on it.
  const huge = Array.from({ length: 70_000 }, (_, i) => `${i % 60} ${i % 24} * * *`).join('\n')

  it('refuses a huge schedule on update with a 400 naming the limit, and the site keeps its previous schedule', async () => {
    const { c, project } = await withProject()
    const site = await createSite(c, { title: 'S', project_id: project.id, import_schedule: '0 6 * * *' })
    expect(huge.length).toBeGreaterThan(700_000)
    expectError(
      await c.put(`/sites/${site.id}`, { import_schedule: huge }),
      400,
      /^import_schedule: at most 2000 characters \(MAX_SCHEDULE_CHARS\); this one has 799159$/,
    )
    const manyLines = Array.from({ length: 51 }, () => '0 6 * * *').join('\n')
    expectError(
      await c.put(`/sites/${site.id}`, { import_schedule: manyLines }),
      400,
      /^import_schedule: at most 50 lines \(MAX_SCHEDULE_LINES\); this one has 51$/,
    )
    // One character over the default: a full listing of the default 2,000 sites stays a few MB.
    const overChars = `0 6 * * *\n0 7 * * ${'1,'.repeat(991)}1`
    expect(overChars.length).toBe(2001)
    expectError(
      await c.put(`/sites/${site.id}`, { import_schedule: overChars }),
      400,
      /^import_schedule: at most 2000 characters \(MAX_SCHEDULE_CHARS\); this one has 2001$/,
    )
    expect(await readSite(c, site.id)).toEqual(site)
  })

  it('refuses a huge schedule on create and creates nothing; 50 lines are accepted', async () => {
    const { c, project } = await withProject()
    await refuseCreate(c, { title: 'S', project_id: project.id, import_schedule: huge }, 400, /MAX_SCHEDULE_CHARS/)
    const fifty = Array.from({ length: 50 }, (_, i) => `${i % 60} ${i % 24} * * *`).join('\n')
    expect((await createSite(c, { title: 'S', project_id: project.id, import_schedule: `${fifty}\n` })).import_schedule).toBe(fifty)
  })

  it('quotes at most 100 characters of a refused line back: a TZ= value of nearly 2,000 characters is cut short', async () => {
    const { c, project } = await withProject()
    const zone = 'Z'.repeat(1980)
    const response = await c.post('/sites', { title: 'S', project_id: project.id, import_schedule: `TZ=${zone}\n0 6 * * *` })
    const message = expectError(response, 400, /^import_schedule: line 1 "TZ=Z+…": unknown time zone "Z+…"$/)
    expect(message).toBe(`import_schedule: line 1 "TZ=${'Z'.repeat(97)}…": unknown time zone "${'Z'.repeat(100)}…"`)
  })
})
