// @agentclientprotocol/sdk driving `headwire --acp` twice: a live session (prompts from the
// config; shell calls allowed, writes rejected, `sleep 30` cancelled once it runs), then, in a
// second process, `session/load` of it.  Prints one JSON summary: the updates the SDK delivered
// per live prompt, and those it delivered before `session/load` answered;
// tests/e2e/test_acp_replay.py checks that the replay equals the live session.
import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { client, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import { config, report } from './inbox.mjs';

const cfg = config();
// Notification handlers run as their own promise chains: let every update received before an
// answer reach the handler before reading the list.
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

async function withAgent(body) {
  const proc = spawn(cfg.command[0], cfg.command.slice(1), {
    cwd: cfg.cwd,
    env: { ...process.env, ...cfg.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const stderr = [];
  proc.stderr.on('data', (d) => stderr.push(d.toString()));
  const stream = ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout));
  const state = { updates: [], ctx: null, sessionId: null };
  const app = client({ name: 'headwire-replay-e2e' })
    .onRequest('session/request_permission', async ({ params }) => {
      const rejected = params.toolCall.rawInput?.file_path !== undefined;
      return { outcome: { outcome: 'selected', optionId: rejected ? 'cancel' : 'proceed_once' } };
    })
    .onNotification('session/update', async ({ params }) => {
      const update = params.update;
      state.updates.push(update);
      if (update.status === 'in_progress' && update.rawInput?.command === 'sleep 30') {
        state.ctx.notify('session/cancel', { sessionId: state.sessionId });
      }
    });
  let result;
  try {
    await app.connectWith(stream, async (ctx) => {
      state.ctx = ctx;
      await ctx.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
      result = await body(ctx, state);
    });
  } finally {
    proc.stdin.end();
    await new Promise((resolve) => (proc.exitCode !== null ? resolve() : proc.on('exit', resolve)));
  }
  return { result, stderr: stderr.join('') };
}

const out = {};
try {
  const live = await withAgent(async (ctx, state) => {
    const session = await ctx.request('session/new', { cwd: cfg.cwd, mcpServers: [] });
    state.sessionId = session.sessionId;
    const turns = [];
    for (const text of cfg.prompts) {
      const start = state.updates.length;
      const answer = await ctx.request('session/prompt', {
        sessionId: session.sessionId,
        prompt: [{ type: 'text', text }],
      });
      await settle();
      turns.push({ prompt: text, stopReason: answer.stopReason, updates: state.updates.slice(start) });
    }
    return { sessionId: session.sessionId, turns };
  });
  out.live = live.result;
  const loaded = await withAgent(async (ctx, state) => {
    state.sessionId = out.live.sessionId;
    await ctx.request('session/load', {
      sessionId: out.live.sessionId,
      cwd: cfg.cwd,
      mcpServers: [],
    });
    await settle();
    return state.updates.slice();
  });
  out.replay = loaded.result;
  out.stderr = live.stderr + loaded.stderr;
} catch (e) {
  out.thrown = String(e && e.stack ? e.stack : e);
}
report(out);
