// Drives the TypeScript original (@ghx-dev/agent-profiler, bundled with esbuild) on the workloads of
// bench/workloads.py, so that bench/bench_original.py can print its figures beside ours, measured on
// the same machine in the same minutes. Written for this project: it holds none of the original's
// code, only calls its public exports. How to build the bundle: bench/README.md, "The TypeScript original".
//
//   node bench/original_harness.mjs WORKLOAD --bundle DIR/agent-profiler.mjs [--anchor DIR] [--repetitions N] [--out DIR]
//
// WORKLOAD, timed in here and printed as one JSON line with "ms": suite_overhead [--repetitions N]
// (2 modes x 10 scenarios x N, replay provider, 4 collectors, 5 analyzers, session export on),
// suite_latency (2 x 5 x 4 with a 50 ms prompt), and the first call of permutation_test,
// bootstrap_ci, bootstrap_reduction_ci, compare_groups (the parity values, 10,000 each).
// Timed by the caller as whole processes: report (10,000 rows: read, then generateReport) and
// one_cell (one iteration and its report).

import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { gunzipSync } from "node:zlib"

function option(name, fallback) {
  const at = process.argv.indexOf(name)
  return at > 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback
}

const workload = process.argv[2]
const bundle = option("--bundle", process.env.PROFILER_ORIGINAL_BUNDLE)
const anchor = option("--anchor", process.env.PROFILER_BENCH_ANCHOR)
if (!workload || !bundle || !anchor) {
  console.error("usage: node original_harness.mjs WORKLOAD --bundle PATH/agent-profiler.mjs --anchor DIR (or PROFILER_BENCH_ANCHOR)")
  process.exit(2)
}
const original = await import(pathToFileURL(resolve(bundle)).href)
const readAnchor = (name) => readFileSync(join(anchor, name), "utf-8")

/** A provider replaying one recorded result and trace after ``latencyMs``; a fresh session id per session. */
function replayProvider(latencyMs = 0) {
  const result = JSON.parse(readAnchor("prompt-result.json"))
  const trace = JSON.parse(readAnchor("session-trace.json"))
  let sessions = 0
  return {
    id: "bench-replay",
    async init() {},
    async createSession() {
      sessions += 1
      return { sessionId: `ses_bench_${sessions}`, provider: "bench-replay", createdAt: new Date().toISOString() }
    },
    async prompt() {
      if (latencyMs) await new Promise((done) => setTimeout(done, latencyMs))
      return result
    },
    async exportSession(handle) {
      return { ...trace, sessionId: handle.sessionId }
    },
    async destroySession() {},
    async shutdown() {},
  }
}

/** A scorer passing its three checks, as bench/workloads.py's PassingScorer. */
const passingScorer = {
  id: "bench-3of3",
  async evaluate() {
    const details = [1, 2, 3].map((i) => ({ id: `cp_${i}`, description: `checkpoint ${i}`, passed: true }))
    return { success: true, passed: 3, total: 3, details, outputValid: true }
  },
}

const modeResolver = {
  async resolve() {
    return { environment: {}, systemInstructions: "", providerOverrides: {} }
  },
}

async function runSuite({ scenarios, repetitions, modes, out, latencyMs = 0 }) {
  const o = original
  return o.runProfileSuite({
    modes,
    scenarios,
    repetitions,
    allowedRetries: 0,
    provider: replayProvider(latencyMs),
    scorer: passingScorer,
    modeResolver,
    collectors: [new o.TokenCollector(), new o.LatencyCollector(), new o.CostCollector(), new o.ToolCallCollector()],
    analyzers: [o.reasoningAnalyzer, o.strategyAnalyzer, o.efficiencyAnalyzer, o.toolPatternAnalyzer, o.errorAnalyzer],
    hooks: {},
    warmup: false,
    sessionExport: true,
    outputJsonlPath: join(out, "results.jsonl"),
    logLevel: "warn",
    runId: "run_bench",
  })
}

const STATS = new Set(["permutation_test", "bootstrap_ci", "bootstrap_reduction_ci", "compare_groups"])
const out = option("--out", null) ?? mkdtempSync(join(tmpdir(), "original-bench-"))
try {
  if (workload === "suite_overhead" || workload === "suite_latency") {
    // suite_overhead: 2 modes x 10 scenarios x N repetitions (100: 2,000 iterations), no latency;
    // suite_latency: 2 x 5 x 4 = 40 iterations of 50 ms (the original runs them one at a time).
    const latency = workload === "suite_latency"
    const scenarios = JSON.parse(readAnchor("scenarios.json")).slice(0, latency ? 5 : 10)
    const repetitions = latency ? 4 : Number(option("--repetitions", "100"))
    const start = performance.now()
    const cpuStart = process.cpuUsage()
    const result = await runSuite({ scenarios, repetitions, modes: ["mode_a", "mode_b"], out, latencyMs: latency ? 50 : 0 })
    const ms = performance.now() - start
    const cpu = process.cpuUsage(cpuStart) // user + system µs of every thread of the process (GC included)
    const iterations = result.rows.length
    if (iterations !== 2 * scenarios.length * repetitions || result.rows.some((r) => !r.success)) {
      throw new Error(`the run is not clean: ${iterations} rows`)
    }
    const peak = process.resourceUsage().maxRSS / 1024
    console.log(JSON.stringify({ ms, iterations, ms_per_iter: ms / iterations, cpu_ms_per_iter: (cpu.user + cpu.system) / 1000 / iterations, peak_rss_mb: peak }))
  } else if (STATS.has(workload)) {
    const values = JSON.parse(readAnchor("stats-values.json"))
    const a = values.slice(0, 500)
    const b = values.slice(500, 1000).map((v) => v + 3)
    const call = {
      permutation_test: () => original.permutationTest(a, b, { permutations: 10_000 }).pValue,
      bootstrap_ci: () => original.bootstrapCI(values, { resamples: 10_000 }).lower,
      bootstrap_reduction_ci: () => original.bootstrapReductionCI(a, b, { resamples: 10_000 }).lower,
      compare_groups: () => original.compareGroups("a", a, "b", b, "m").pValue,
    }[workload]
    const start = performance.now()
    const value = call()
    console.log(JSON.stringify({ ms: performance.now() - start, value }))
  } else if (workload === "report") {
    const rows = gunzipSync(readFileSync(join(anchor, "report-rows.jsonl.gz")))
      .toString("utf-8")
      .split("\n")
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line))
    await original.generateReport({ runId: "run_bench_report", rows, reportsDir: out, reportDir: join(out, "report") })
    console.log(JSON.stringify({ rows: rows.length }))
  } else if (workload === "one_cell") {
    // One model x mode x scenario x repetition, then its report: the original's `run` of a 1-cell profile.
    const scenarios = JSON.parse(readAnchor("scenarios.json")).slice(0, 1)
    const result = await runSuite({ scenarios, repetitions: 1, modes: ["baseline"], out })
    await original.generateReport({
      runId: result.runId, rows: result.rows, reportsDir: out, reportDir: join(out, "report"),
      analysisResults: result.analysisResults,
    })
    console.log(JSON.stringify({ rows: result.rows.length }))
  } else {
    throw new Error(`unknown workload ${workload}`)
  }
} finally {
  if (!option("--out", null)) rmSync(out, { recursive: true, force: true })
}
