// @anthropic-ai/claude-agent-sdk driving headwire through the run contract: `outputFormat`
// (passed as --json-schema) with an answer corrected once, one that never validates, and
// `maxBudgetUsd` (--max-budget-usd) stopping a run.  Prints one JSON summary line;
// tests/e2e/test_js_clients.py checks it.
import { query } from '@anthropic-ai/claude-agent-sdk';
import { config, report } from './inbox.mjs';

const cfg = config();
const env = { ...process.env, ...cfg.env };
const stderr = [];
const outputFormat = { type: 'json_schema', schema: cfg.schema };

async function run(model, extra) {
  const results = [];
  for await (const m of query({
    prompt: 'rate it',
    options: { pathToClaudeCodeExecutable: cfg.launcher, model, cwd: cfg.cwd, env,
      stderr: (s) => stderr.push(s), ...extra },
  })) {
    if (m.type !== 'result') continue;
    results.push({ subtype: m.subtype, is_error: m.is_error, errors: m.errors ?? null,
      result: m.result ?? null, structured_output: m.structured_output ?? null,
      total_cost_usd: m.total_cost_usd, num_turns: m.num_turns,
      models: Object.keys(m.modelUsage ?? {}) });
  }
  return results;
}

const out = { stderr };
try {
  out.corrected = await run(cfg.correctedModel, { outputFormat });
  out.never = await run(cfg.neverModel, { outputFormat });
  out.budget = await run(cfg.budgetModel, { maxBudgetUsd: 0.00012 });
} catch (e) {
  out.thrown = String(e && e.stack ? e.stack : e);
}
report(out);
