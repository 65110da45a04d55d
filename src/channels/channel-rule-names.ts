import type { DbHandle } from '../db/database.js'
import { BadRequestError } from '../errors.js'
import { xmlNameProblem } from '../feeds/feed-xml.js'

/**
 * A channel turned to XML: every attribute its rules write becomes an element, so each must be an
 * XML name. Refused when the channel is saved, naming the rule, rather than at the next export.
 */
export async function requireXmlRuleNames(db: DbHandle, channel: { id: string; account_id: string }): Promise<void> {
  const rules = await db
    .selectFrom('rule')
    .select(['id', 'attribute'])
    .where('account_id', '=', channel.account_id)
    .where('channel_id', '=', channel.id)
    .where('attribute', 'is not', null)
    .orderBy('position')
    .execute()
  for (const rule of rules) {
    const problem = xmlNameProblem(rule.attribute ?? '')
    if (problem) {
      throw new BadRequestError(
        `format: xml cannot carry the attribute "${rule.attribute}" that rule ${rule.id} of this channel writes: ${problem}; change the rule first`,
      )
    }
  }
}
