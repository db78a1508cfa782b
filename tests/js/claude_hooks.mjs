// @anthropic-ai/claude-agent-sdk's hooks driving headwire (issue 24): a PreToolUse callback
// registered for "Bash" denies the shell command; prints one JSON summary line that
// tests/e2e/test_js_clients.py checks.
import { query } from '@anthropic-ai/claude-agent-sdk';
import { config, report } from './inbox.mjs';

const cfg = config();
const seen = [];
const out = { seen };
try {
  const results = [];
  const guard = async (input, toolUseId) => {
    seen.push({ event: input.hook_event_name, tool: input.tool_name, command: input.tool_input?.command,
      toolUseId });
    return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny',
      permissionDecisionReason: 'no shell from TypeScript' } };
  };
  for await (const m of query({
    prompt: 'go',
    options: {
      pathToClaudeCodeExecutable: cfg.launcher, model: cfg.model, cwd: cfg.cwd,
      env: { ...process.env, ...cfg.env }, permissionMode: 'bypassPermissions',
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [guard] }] },
    },
  })) {
    if (m.type === 'user' && Array.isArray(m.message.content)) {
      for (const b of m.message.content) {
        if (b.type === 'tool_result') results.push({ is_error: b.is_error, content: b.content });
      }
    }
    if (m.type === 'result') out.result = m.result ?? null;
  }
  out.results = results;
} catch (e) {
  out.thrown = String(e && e.stack ? e.stack : e);
}
report(out);
