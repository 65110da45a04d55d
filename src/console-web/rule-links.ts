// Where the console's rule pages are: a site's rules and each channel's, each rule's
// editor and the forms that change a rule.

/** The rules page of a site (no channel) or of one of its channels. */
export function rulesPath(siteId: string, channelId?: string | null): string {
  return channelId ? `/console/sites/${siteId}/channels/${channelId}/rules` : `/console/sites/${siteId}/rules`
}

/** The editor of a rule, or of a new one (`ruleId` undefined), with the prefill of `params`. */
export function ruleEditorPath(siteId: string, channelId: string | null | undefined, ruleId?: string, params?: URLSearchParams): string {
  const query = params?.toString() ?? ''
  return `${rulesPath(siteId, channelId)}/${ruleId ?? 'new'}${query === '' ? '' : `?${query}`}`
}

/** The two places rule pages hang under: a site, and one of its channels. */
export const RULE_SCOPE_PREFIXES = ['/console/sites/:siteId', '/console/sites/:siteId/channels/:channelId'] as const

/** A rule page's path parameters. */
export interface RuleParams {
  siteId: string
  channelId?: string
  ruleId?: string
}

/** The scope a rule page's path names, as the rule domain functions take it. */
export function ruleScopeRef(params: RuleParams): { siteSegment: string; channelId?: string } {
  return params.channelId === undefined ? { siteSegment: params.siteId } : { siteSegment: params.siteId, channelId: params.channelId }
}
