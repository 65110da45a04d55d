#!/usr/bin/env node
import { Command } from 'commander'
import { operatorCommands } from './cli/commands.js'
import { ConfigError } from './config.js'
import { EmbeddedPostgresError } from './db/embedded-access.js'
import { AppError } from './errors.js'

const program = new Command()
  .name('catalog-platform')
  .description('Catalog Platform server and operator commands; configuration comes from the environment (see README)')
  .showHelpAfterError()

// The server's modules are loaded only to serve: an operator command starts in a fraction of the time.
program
  .command('serve', { isDefault: true })
  .description('start the HTTP server')
  .action(async () => (await import('./cli/serve.js')).serve())
operatorCommands(program)

program.parseAsync(process.argv).catch((error: unknown) => {
  // Errors the operator can act on are told as one line; a stack trace would only bury the advice.
  if (error instanceof AppError || error instanceof ConfigError || error instanceof EmbeddedPostgresError) {
    console.error(`error: ${error.message}`)
  } else {
    console.error(error)
  }
  process.exit(1)
})
