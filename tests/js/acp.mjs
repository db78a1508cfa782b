// @agentclientprotocol/sdk (the 2.x client app over ndJsonStream) driving `headwire
// --experimental-acp`: a prompt whose shell tool prints 499,999 bytes (allowed), a prompt
// whose write is rejected, a prompt cancelled while `sleep 30` runs.  Prints one JSON summary
// line with every update as the SDK delivered it; tests/e2e/test_js_clients.py checks it.
import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { client, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import { config, report } from './inbox.mjs';

const cfg = config();
const proc = spawn(cfg.launcher, ['--experimental-acp', '--script', cfg.script], {
  cwd: cfg.cwd,
  env: { ...process.env, ...cfg.env },
  stdio: ['pipe', 'pipe', 'pipe'],
});
const stderr = [];
proc.stderr.on('data', (d) => stderr.push(d.toString()));
const stream = ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout));

const updates = [];
const permissions = [];
let onSleep = null;

const app = client({ name: 'headwire-e2e' })
  .onRequest('session/request_permission', async ({ params }) => {
    permissions.push(params.toolCall._meta?.toolName ?? params.toolCall.title);
    if (params.toolCall.rawInput?.file_path) {
      return { outcome: { outcome: 'selected', optionId: 'cancel' } };
    }
    if (params.toolCall.rawInput?.command === 'sleep 30' && onSleep) setTimeout(onSleep, 300);
    return { outcome: { outcome: 'selected', optionId: 'proceed_once' } };
  })
  .onNotification('session/update', async ({ params }) => {
    updates.push(params.update);
  });

const out = { stderr, updates, permissions };
try {
  await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    out.protocolVersion = init.protocolVersion;
    const session = await ctx.request('session/new', { cwd: cfg.cwd, mcpServers: [] });
    const prompt = (text) => ctx.request('session/prompt', {
      sessionId: session.sessionId, prompt: [{ type: 'text', text }],
    });
    out.stops = [];
    out.stops.push((await prompt('Run the big output tool once, then say done.')).stopReason);
    out.stops.push((await prompt('write r.txt')).stopReason);
    onSleep = () => ctx.notify('session/cancel', { sessionId: session.sessionId });
    out.stops.push((await prompt('sleep')).stopReason);
  });
} catch (e) {
  out.thrown = String(e && e.stack ? e.stack : e);
}
proc.stdin.end();
out.exit = await new Promise((resolve) => {
  if (proc.exitCode !== null) resolve(proc.exitCode);
  else proc.on('exit', (code) => resolve(code));
});
report(out);
