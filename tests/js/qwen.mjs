// @qwen-code/sdk driving headwire: one streaming session (a tool allowed, one denied, an
// interrupted turn, one more turn), then a one-shot query that hits --max-session-turns.
// Prints one JSON summary line; tests/e2e/test_js_clients.py checks it.
import { query } from '@qwen-code/sdk';
import { Inbox, config, report } from './inbox.mjs';

const cfg = config();
const env = { ...process.env, ...cfg.env };
const stderr = [];

function summarize(m) {
  if (m.type === 'result') {
    return { type: 'result', subtype: m.subtype, is_error: m.is_error, errors: m.errors ?? null,
      result: m.result ?? null, denials: (m.permission_denials || []).map((d) => d.tool_name) };
  }
  if (m.type === 'assistant') {
    return { type: 'assistant', blocks: m.message.content.map((b) => b.type), model: m.message.model };
  }
  if (m.type === 'user') {
    const blocks = Array.isArray(m.message.content) ? m.message.content : [];
    return { type: 'user', results: blocks.filter((b) => b.type === 'tool_result')
      .map((b) => ({ is_error: b.is_error, content: b.content })) };
  }
  return { type: m.type, subtype: m.subtype ?? null };
}

async function session() {
  const inbox = new Inbox();
  const asked = [];
  let interrupted = false;
  const q = query({
    prompt: inbox,
    options: {
      pathToQwenExecutable: cfg.launcher,
      model: cfg.model,
      cwd: cfg.cwd,
      env,
      stderr: (s) => stderr.push(s),
      canUseTool: async (name, input) => {
        asked.push(name);
        if (name === 'write_file') return { behavior: 'deny', message: 'writes are not allowed here' };
        if (input.command === 'sleep 30') {
          setTimeout(() => { interrupted = true; q.interrupt(); }, 300);
        }
        return { behavior: 'allow', updatedInput: input };
      },
    },
  });
  const turns = [[]];
  inbox.push('first');
  for await (const m of q) {
    turns[turns.length - 1].push(summarize(m));
    if (m.type !== 'result') continue;
    if (turns.length === 1) inbox.push('second');
    else if (turns.length === 2) inbox.push('third');
    else { inbox.close(); break; }
    turns.push([]);
  }
  return { asked, interrupted, turns };
}

async function maxTurns() {
  const messages = [];
  for await (const m of query({
    prompt: 'go',
    options: { pathToQwenExecutable: cfg.launcher, model: cfg.maxTurnsModel, cwd: cfg.cwd,
      env, maxSessionTurns: 1 },
  })) {
    messages.push(summarize(m));
  }
  return messages;
}

const out = { stderr };
try {
  out.session = await session();
  out.maxTurns = await maxTurns();
} catch (e) {
  out.thrown = String(e && e.stack ? e.stack : e);
}
report(out);
