import { Type } from '@sinclair/typebox'
import type { RuleRow } from '../db/schema.js'
import { ruleSpecOf } from '../rules/rule-store.js'
import { ruleWords } from '../rules/rule-words.js'
import { formatTimestamp, links } from './envelope.js'
import { Links, Timestamp } from './schemas.js'

// Rules as the platform interface shows them (docs/interface.md "Rules"): the fields a client sends,
// with the rule's place and scope, and the rule in words.

export const RuleOut = Type.Object({
  id: Type.String(),
  site_id: Type.String(),
  channel_id: Type.Union([Type.String(), Type.Null()], { description: "null: a site rule (the intermediate stage's)" }),
  position: Type.Integer({ description: '1 for the first rule to run' }),
  enabled: Type.Boolean(),
  description: Type.String(),
  attribute: Type.Union([Type.String(), Type.Null()], { description: 'what the actions write; null for a rule that only excludes' }),
  if: Type.Unknown({ description: 'null (always), or {"all": [...]} / {"any": [...]} of conditions and groups' }),
  then: Type.Array(Type.Unknown()),
  else: Type.Array(Type.Unknown()),
  summary: Type.String({ description: 'the rule in words' }),
  created_at: Timestamp,
  updated_at: Timestamp,
  links: Links,
})

export function ruleView(row: RuleRow, base: string) {
  const rule = ruleSpecOf(row)
  const scope = row.channel_id === null ? `/sites/${row.site_id}` : `/sites/${row.site_id}/channels/${row.channel_id}`
  return {
    id: row.id,
    site_id: row.site_id,
    channel_id: row.channel_id,
    position: row.position,
    enabled: row.enabled,
    description: row.description,
    attribute: row.attribute,
    if: rule.if,
    then: rule.then,
    else: rule.else,
    summary: ruleWords(rule),
    created_at: formatTimestamp(row.created_at),
    updated_at: formatTimestamp(row.updated_at),
    links: links(`${base}/platform/v2`, { self: `${scope}/rules/${row.id}`, rules: `${scope}/rules`, preview: `${scope}/rules/preview` }),
  }
}

export const PreviewOut = Type.Object({
  scope: Type.String({ enum: ['site', 'channel'] }),
  columns: Type.Array(Type.String(), { description: "the stage's columns after the rules" }),
  products: Type.Array(Type.Unknown(), { description: '{id, before, after, excluded, steps[], and for a channel checks and line}' }),
  summary: Type.Unknown({ description: 'over the whole stage: products, changed, excluded, matches per rule, and for a channel the readiness' }),
})
