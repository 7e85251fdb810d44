// Bundles the TypeScript original with esbuild, for bench/bench_original.py (see bench/README.md).
// Written for this project; the original's code is read from its own checkout, never copied here.
//
//   node bench/original_build.mjs CHECKOUT OUT     # CHECKOUT: the original's repository (packages/...)
//
// Needs esbuild and the original's dependencies installed where Node finds them from CHECKOUT
// (README: `npm install esbuild@0.28 js-yaml@5.2.2 zod@4.4.3 commander@15.0.0 yaml@2.9.0 ajv@8.20.0
// graphql@17.0.2 @opencode-ai/sdk@1` in CHECKOUT). Writes OUT/agent-profiler.mjs (the package's
// public API), OUT/eval-cli.mjs (the eval CLI, for `--help`) and OUT/cards (files that CLI reads).

import { cpSync, existsSync } from "node:fs"
import { createRequire } from "node:module"
import { join, resolve } from "node:path"

const [checkout, out] = process.argv.slice(2).map((p) => p && resolve(p))
if (!checkout || !out) {
  console.error("usage: node bench/original_build.mjs CHECKOUT OUT")
  process.exit(2)
}
const require = createRequire(join(checkout, "package.json"))
const { build } = require("esbuild")
const packages = join(checkout, "packages")
const alias = {
  "@ghx-dev/agent-profiler": join(packages, "agent-profiler/src/index.ts"),
  "@ghx-dev/core": join(packages, "core/src/index.ts"),
  // js-yaml 5's ESM build has no default export; the sources import its default (CommonJS interop).
  "js-yaml": require.resolve("js-yaml").replace(/js-yaml\.mjs$/, "js-yaml.cjs.js"),
}
const common = { bundle: true, platform: "node", format: "esm", target: "node20", alias, logLevel: "error", absWorkingDir: checkout }
await build({ ...common, entryPoints: [join(packages, "agent-profiler/src/index.ts")], outfile: join(out, "agent-profiler.mjs") })
await build({
  ...common,
  entryPoints: [join(packages, "eval/src/cli/index.ts")],
  outfile: join(out, "eval-cli.mjs"),
  // CommonJS dependencies call require() inside the ESM bundle.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
})
const cards = join(packages, "core/src/core/registry/cards")
if (existsSync(cards)) cpSync(cards, join(out, "cards"), { recursive: true })
console.log(`built ${out}/agent-profiler.mjs and ${out}/eval-cli.mjs`)
