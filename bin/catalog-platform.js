#!/usr/bin/env node
// The published entry point runs the compiled CLI; `npm ci` builds it (the `prepare` script).
import '../dist/src/main.js'
