import type { FastifySchemaValidationError } from 'fastify/types/schema.js'

/** One sentence naming the field and the broken rule, from Ajv's errors, e.g. `limit: must be <= 1000`. */
export function validationMessage(errors: FastifySchemaValidationError[], context: string | undefined): string {
  return errors
    .slice(0, 3)
    .map((error) => {
      const params = error.params as Record<string, unknown>
      const path = error.instancePath.replace(/^\//, '').replace(/\//g, '.')
      const field = typeof params.missingProperty === 'string' ? [path, params.missingProperty].filter(Boolean).join('.') : path
      const rule = Array.isArray(params.allowedValues)
        ? `must be one of ${params.allowedValues.filter((v) => v !== null).join(', ')}`
        : (error.message ?? 'is invalid').replace(/,null\b/, '').replace(/ or null\b/, '')
      return `${field || context || 'request'}: ${rule}`
    })
    .join('; ')
}
